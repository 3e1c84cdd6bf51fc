import { parquetMetadata, parquetReadObjects } from "hyparquet";
import { textProblem } from "../../../server/inputText";
import { loneSurrogateField } from "./rowText";

/**
 * Parsing of uploaded dataset files (JSONL, CSV, Parquet), shared by the REST upload
 * (`POST /api/v1/datasets`) and the designer's datasets page. The whole file is read before anything
 * is stored; the first malformed row is named by its line (text formats) or row (Parquet).
 */

export const DATASET_FORMATS = ["jsonl", "csv", "parquet"] as const;
export type DatasetFormat = (typeof DATASET_FORMATS)[number];

/** Biggest file either upload path accepts (stated in the UI and the OpenAPI document). */
export const MAX_DATASET_BYTES = 10 * 1024 * 1024;
/** Rows kept for a preview. */
export const PREVIEW_ROWS = 20;

export type DatasetRow = Record<string, unknown>;

export interface ParsedDataset {
  rowCount: number;
  /** Column names in first-seen order. */
  columns: string[];
  /** Column -> JSON type seen across all rows ("string", "integer", …, or "a|b" when rows disagree). */
  columnTypes: Record<string, string>;
  /** The first PREVIEW_ROWS rows. */
  preview: DatasetRow[];
}

/** What is wrong and where: `line` for JSONL/CSV (1-based line of the file), `row` for Parquet. */
export class DatasetParseError extends Error {
  constructor(
    message: string,
    readonly line?: number,
    readonly row?: number,
  ) {
    super(line !== undefined ? `line ${line}: ${message}` : row !== undefined ? `row ${row}: ${message}` : message);
    this.name = "DatasetParseError";
  }
  /** The reason without the location prefix. */
  get reason(): string {
    return this.message.replace(/^(line|row) \d+: /, "");
  }
}

export function jsonType(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  if (typeof value === "bigint") return "integer";
  return typeof value === "object" ? "object" : typeof value;
}

/** Accumulates columns in first-seen order, their types and the preview rows. */
class RowCollector {
  private readonly types = new Map<string, Set<string>>();
  readonly preview: DatasetRow[] = [];
  rowCount = 0;

  /** `where`: the row's line (text formats) or row number (Parquet), to name it when a column name cannot be stored. */
  add(row: DatasetRow, where: { line?: number; row?: number } = {}): void {
    for (const [key, value] of Object.entries(row)) {
      if (!this.types.has(key)) {
        const problem = textProblem(key);
        if (problem) throw new DatasetParseError(`the column name ${JSON.stringify(key)} ${problem}`, where.line, where.row);
      }
      const surrogate = loneSurrogateField(value, [key]);
      if (surrogate !== null) {
        throw new DatasetParseError(`field ${JSON.stringify(surrogate)} holds a lone UTF-16 surrogate (e.g. "\\ud800"), which is not Unicode text: training would fail on it`, where.line, where.row);
      }
      let seen = this.types.get(key);
      if (!seen) this.types.set(key, (seen = new Set()));
      seen.add(jsonType(value));
    }
    if (this.preview.length < PREVIEW_ROWS) this.preview.push(row);
    this.rowCount++;
  }

  result(columns?: string[]): ParsedDataset {
    const names = columns ?? [...this.types.keys()];
    // Built with fromEntries, not `obj[name] = …`: a column named `__proto__` stays an ordinary key.
    const columnTypes: Record<string, string> = Object.fromEntries(
      names.map((name) => {
        const seen = [...(this.types.get(name) ?? new Set(["null"]))];
        // An integer column with a few floats is a number column, not "integer|number".
        const merged = seen.includes("number") ? seen.filter((t) => t !== "integer") : seen;
        return [name, merged.sort().join("|")];
      }),
    );
    return { rowCount: this.rowCount, columns: names, columnTypes, preview: this.preview };
  }
}

export function parseJsonl(text: string): ParsedDataset {
  const rows = new RowCollector();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, "");
    if (line.trim() === "") continue;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch (e) {
      const reason = e instanceof Error ? e.message.replace(/\s*\(line \d+ column \d+\)/, "") : "parse error";
      throw new DatasetParseError(`not valid JSON: ${reason}`, i + 1);
    }
    if (typeof row !== "object" || row === null || Array.isArray(row)) {
      throw new DatasetParseError("each line must be a JSON object (a row with named fields)", i + 1);
    }
    rows.add(row as DatasetRow, { line: i + 1 });
  }
  if (rows.rowCount === 0) throw new DatasetParseError("the file holds no rows");
  return rows.result();
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
          if (i >= n) throw new DatasetParseError("a quoted field is never closed", startLine);
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
          throw new DatasetParseError("unexpected character after a closing quote", line);
        }
      } else {
        while (i < n && text[i] !== "," && text[i] !== "\n" && text[i] !== "\r") {
          if (text[i] === '"') {
            throw new DatasetParseError('a quote inside an unquoted field (quote the field and double the quote: "")', line);
          }
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

/** Every CSV value is a string: that is what the runtime's csv reader hands a reward function. */
export function parseCsv(text: string): ParsedDataset {
  let header: string[] | null = null;
  const rows = new RowCollector();
  for (const { line, fields } of csvRecords(text)) {
    if (fields.length === 1 && fields[0] === "") continue; // blank line
    if (!header) {
      const seen = new Set<string>();
      fields.forEach((name, i) => {
        if (name.trim() === "") throw new DatasetParseError(`header column ${i + 1} has no name`, line);
        if (seen.has(name)) throw new DatasetParseError(`header column "${name}" appears twice`, line);
        seen.add(name);
      });
      header = fields;
      continue;
    }
    if (fields.length !== header.length) {
      throw new DatasetParseError(`has ${fields.length} field(s); the header has ${header.length}`, line);
    }
    rows.add(Object.fromEntries(header.map((name, i) => [name, fields[i]])), { line });
  }
  if (!header) throw new DatasetParseError("the file is empty: a header row is needed");
  if (rows.rowCount === 0) throw new DatasetParseError("the file holds a header but no rows");
  return rows.result(header);
}

/** Parquet values as JSON would carry them: int64 as numbers when exact, else strings; dates as ISO text. */
function jsonSafe(value: unknown): unknown {
  if (typeof value === "bigint") {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : value.toString();
  }
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonSafe(v)]));
  }
  return value;
}

export async function parseParquet(bytes: Uint8Array): Promise<ParsedDataset> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  let columns: string[];
  try {
    columns = parquetMetadata(file).schema.slice(1).filter((el) => el.name !== undefined).map((el) => el.name);
  } catch (e) {
    throw new DatasetParseError(`not a readable Parquet file: ${e instanceof Error ? e.message : String(e)}`);
  }
  let objects: Record<string, unknown>[];
  try {
    objects = await parquetReadObjects({ file });
  } catch (e) {
    throw new DatasetParseError(`could not decode the Parquet data: ${e instanceof Error ? e.message : String(e)}`);
  }
  const rows = new RowCollector();
  objects.forEach((obj, i) => rows.add(jsonSafe(obj) as DatasetRow, { row: i + 1 }));
  if (rows.rowCount === 0) throw new DatasetParseError("the file holds no rows");
  // Top-level columns only (nested fields belong to their parent column).
  const topLevel = columns.filter((c) => c in (objects[0] ?? {}));
  return rows.result(topLevel.length > 0 ? topLevel : undefined);
}

export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new DatasetParseError("the file is not UTF-8 text");
  }
}

export async function parseDataset(format: DatasetFormat, bytes: Uint8Array): Promise<ParsedDataset> {
  if (bytes.byteLength > MAX_DATASET_BYTES) {
    throw new DatasetParseError(`the file is ${bytes.byteLength} bytes; the limit is ${MAX_DATASET_BYTES} bytes (10 MiB)`);
  }
  if (format === "parquet") return parseParquet(bytes);
  const text = decodeUtf8(bytes);
  return format === "jsonl" ? parseJsonl(text) : parseCsv(text);
}

/** The format a file name implies (`.jsonl`/`.ndjson`, `.csv`, `.parquet`), or null. */
export function formatFromFileName(name: string): DatasetFormat | null {
  const ext = name.toLowerCase().split(".").pop() ?? "";
  if (ext === "jsonl" || ext === "ndjson") return "jsonl";
  if (ext === "csv") return "csv";
  if (ext === "parquet" || ext === "pq") return "parquet";
  return null;
}
