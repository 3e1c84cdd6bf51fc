import { formatPath, type FieldIssue } from "@troupe/contracts";

/**
 * Text Postgres cannot store, found before it gets there: a NUL character (text columns refuse
 * U+0000, jsonb refuses `\u0000`) or a lone UTF-16 surrogate (not Unicode at all; jsonb refuses it).
 * Left alone, either becomes a driver error and a 500 deep inside a write; caught at the boundary it
 * is a 400 naming the field. Keys are checked as well as values (dataset columns, spec maps).
 */

const MAX_DEPTH = 64;
// With the u flag a well-formed pair is one code point, so only a lone surrogate is category Cs.
const LONE_SURROGATE = /\p{Cs}/u;

export function textProblem(text: string): string | null {
  if (text.includes("\u0000")) return "contains a NUL character (U+0000), which cannot be stored";
  if (LONE_SURROGATE.test(text)) return "contains a lone UTF-16 surrogate (not valid Unicode text)";
  return null;
}

/** The first string or key in `value` that cannot be stored, with its path; null when all can. */
export function findUnstorableText(value: unknown, path: (string | number)[] = []): FieldIssue | null {
  if (typeof value === "string") {
    const problem = textProblem(value);
    return problem ? { path: path.length ? formatPath(path) : "(root)", message: problem } : null;
  }
  if (typeof value !== "object" || value === null || path.length > MAX_DEPTH) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      if (typeof item === "number" || typeof item === "boolean" || item === null) continue; // long numeric arrays stay cheap
      const found = findUnstorableText(item, [...path, i]);
      if (found) return found;
    }
    return null;
  }
  if (value instanceof Date || value instanceof Uint8Array) return null;
  for (const [key, item] of Object.entries(value)) {
    const keyProblem = textProblem(key);
    if (keyProblem) return { path: path.length ? formatPath(path) : "(root)", message: `a key ${keyProblem.replace("contains", "that contains")}` };
    const found = findUnstorableText(item, [...path, key]);
    if (found) return found;
  }
  return null;
}
