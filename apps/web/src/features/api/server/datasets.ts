import { createHash } from "node:crypto";
import type { Db } from "../../../server/db";
import { ApiError, type ApiFieldIssue } from "./problem";
import type { DatasetOut } from "./schemas";

/**
 * Dataset uploads: the whole file is validated before anything is stored, and stored in one insert,
 * so a bad or interrupted upload leaves nothing behind. The first malformed row is named by its line.
 */

export type DatasetFormat = "jsonl" | "csv";

export interface ParsedDataset {
  rowCount: number;
  columns: string[];
}

function rowError(line: number, message: string): ApiError {
  const issue: ApiFieldIssue = { path: "(body)", message, line };
  return ApiError.validation([issue], "invalid dataset");
}

export function parseJsonl(text: string): ParsedDataset {
  const columns = new Map<string, true>();
  let rowCount = 0;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, "");
    if (line.trim() === "") continue;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch (e) {
      throw rowError(i + 1, `not valid JSON: ${e instanceof Error ? e.message.replace(/\s*\(line \d+ column \d+\)/, "") : "parse error"}`);
    }
    if (typeof row !== "object" || row === null || Array.isArray(row)) {
      throw rowError(i + 1, "each line must be a JSON object (a row with named fields)");
    }
    for (const key of Object.keys(row)) columns.set(key, true);
    rowCount++;
  }
  if (rowCount === 0) throw ApiError.validation([{ path: "(body)", message: "the file holds no rows" }], "invalid dataset");
  return { rowCount, columns: [...columns.keys()] };
}

/** RFC 4180 records with the line each starts on (quoted fields may hold commas, quotes and line breaks). */
function* csvRecords(text: string): Generator<{ line: number; fields: string[] }> {
  let i = 0;
  let line = 1;
  const n = text.length;
  while (i < n) {
    const startLine = line;
    const fields: string[] = [];
    for (;;) {
      let field = "";
      if (text[i] === '"') {
        i++;
        for (;;) {
          if (i >= n) throw rowError(startLine, "a quoted field is never closed");
          const c = text[i]!;
          if (c === '"') {
            if (text[i + 1] === '"') {
              field += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          if (c === "\n") line++;
          field += c;
          i++;
        }
        if (i < n && text[i] !== "," && text[i] !== "\n" && text[i] !== "\r") {
          throw rowError(line, "unexpected character after a closing quote");
        }
      } else {
        while (i < n && text[i] !== "," && text[i] !== "\n" && text[i] !== "\r") {
          if (text[i] === '"') throw rowError(line, 'a quote inside an unquoted field (quote the field and double the quote: "")');
          field += text[i];
          i++;
        }
      }
      fields.push(field);
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "\r") i++;
      if (text[i] === "\n") {
        i++;
        line++;
      }
      break;
    }
    yield { line: startLine, fields };
  }
}

export function parseCsv(text: string): ParsedDataset {
  let header: string[] | null = null;
  let rowCount = 0;
  for (const { line, fields } of csvRecords(text)) {
    if (fields.length === 1 && fields[0] === "") continue; // blank line
    if (!header) {
      const seen = new Set<string>();
      fields.forEach((name, i) => {
        if (name.trim() === "") throw rowError(line, `header column ${i + 1} has no name`);
        if (seen.has(name)) throw rowError(line, `header column "${name}" appears twice`);
        seen.add(name);
      });
      header = fields;
      continue;
    }
    if (fields.length !== header.length) {
      throw rowError(line, `has ${fields.length} field(s); the header has ${header.length}`);
    }
    rowCount++;
  }
  if (!header) throw ApiError.validation([{ path: "(body)", message: "the file is empty: a header row is needed" }], "invalid dataset");
  if (rowCount === 0) throw ApiError.validation([{ path: "(body)", message: "the file holds a header but no rows" }], "invalid dataset");
  return { rowCount, columns: header };
}

export function parseDataset(format: DatasetFormat, text: string): ParsedDataset {
  return format === "jsonl" ? parseJsonl(text) : parseCsv(text);
}

const FORMAT_BY_MEDIA_TYPE: Record<string, DatasetFormat> = {
  "application/jsonl": "jsonl",
  "application/x-jsonlines": "jsonl",
  "application/x-ndjson": "jsonl",
  "application/ndjson": "jsonl",
  "text/csv": "csv",
};

export function formatFromMediaType(type: string | null): DatasetFormat | null {
  return type ? (FORMAT_BY_MEDIA_TYPE[type] ?? null) : null;
}

export async function storeDataset(
  db: Db,
  args: { name: string; format: DatasetFormat; bytes: Uint8Array; parsed: ParsedDataset },
): Promise<DatasetOut> {
  const row = await db.dataset.create({
    data: {
      name: args.name,
      format: args.format,
      byteSize: args.bytes.byteLength,
      rowCount: args.parsed.rowCount,
      columns: args.parsed.columns,
      sha256: createHash("sha256").update(args.bytes).digest("hex"),
      content: Buffer.from(args.bytes),
    },
    select: { id: true, name: true, format: true, byteSize: true, rowCount: true, columns: true, sha256: true, createdAt: true },
  });
  return { ...row, format: args.format, columns: args.parsed.columns, createdAt: row.createdAt.toISOString() };
}
