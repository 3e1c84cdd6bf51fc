import { formatPath, type ApiFieldIssue } from "@troupe/contracts";
import { isNode, LineCounter, parseDocument, type Document } from "yaml";
import type { z } from "zod";
import { decodeUtf8, mediaType, readBodyBytes } from "./body";
import { findUnstorableText } from "../../../server/inputText";
import { ApiError } from "./problem";

/**
 * A JSON or YAML request body, parsed, and a way to put validation issues back on the lines of the
 * text the caller sent: for YAML every issue carries the line and column of the value at its path
 * (or of its nearest existing parent, for a missing field).
 */

export const YAML_MEDIA_TYPES = ["application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"];
export const JSON_MEDIA_TYPES = ["application/json"];

export interface ParsedBody {
  value: unknown;
  /** Issues of a schema parse of `value`, located in the body where it is YAML. */
  issues(error: z.ZodError): ApiFieldIssue[];
}

function lineColumnAt(text: string, position: number): { line: number; column: number } {
  const before = text.slice(0, position);
  const line = before.split("\n").length;
  return { line, column: position - before.lastIndexOf("\n") };
}

export function parseJson(text: string): ParsedBody {
  try {
    const value: unknown = JSON.parse(text);
    return { value, issues: (error) => error.issues.map((i) => ({ path: formatPath(i.path), message: i.message })) };
  } catch (e) {
    const message = e instanceof Error ? e.message : "invalid JSON";
    const position = /at position (\d+)/.exec(message);
    const where = position ? lineColumnAt(text, Number(position[1])) : {};
    const short = message.replace(/\s*\(line \d+ column \d+\)/, "");
    throw ApiError.validation([{ path: "(root)", message: `invalid JSON: ${short}`, ...where }], "invalid body");
  }
}

function locate(doc: Document, lines: LineCounter, path: readonly PropertyKey[]): { line?: number; column?: number } {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth) as unknown[], true);
    if (isNode(node) && node.range) {
      const pos = lines.linePos(node.range[0]);
      return { line: pos.line, column: pos.col };
    }
  }
  return {};
}

export function parseYaml(text: string): ParsedBody {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: true });
  const first = doc.errors[0];
  if (first) {
    const pos = first.linePos?.[0];
    const message = first.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
    throw ApiError.validation(
      [{ path: "(root)", message: `invalid YAML: ${message}`, ...(pos ? { line: pos.line, column: pos.col } : {}) }],
      "invalid body",
    );
  }
  // Aliases are capped so a "billion laughs" document cannot blow up memory: past the cap the
  // library throws, and the caller gets a 400 saying why (not a 500).
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    throw ApiError.validation([{ path: "(root)", message: `invalid YAML: ${message.split("\n")[0]}` }], "invalid body");
  }
  return {
    value,
    issues: (error) => error.issues.map((i) => ({ path: formatPath(i.path), message: i.message, ...locate(doc, lines, i.path) })),
  };
}

/** Read, size-check and parse a JSON (default) or YAML body. */
export async function readSpecBody(request: Request, maxBytes: number): Promise<ParsedBody> {
  const type = mediaType(request);
  const isYaml = type !== null && YAML_MEDIA_TYPES.includes(type);
  const isJson = type === null || JSON_MEDIA_TYPES.includes(type) || type.endsWith("+json");
  if (!isYaml && !isJson) {
    throw new ApiError(
      415,
      "unsupportedMediaType",
      `Content-Type ${type} is not accepted: send application/json or application/yaml`,
    );
  }
  const text = decodeUtf8(await readBodyBytes(request, maxBytes));
  if (text.trim() === "") throw ApiError.validation([{ path: "(root)", message: "the body is empty" }], "invalid body");
  const parsed = isYaml ? parseYaml(text) : parseJson(text);
  const unstorable = findUnstorableText(parsed.value);
  if (unstorable) throw ApiError.validation([unstorable], "invalid body");
  return parsed;
}
