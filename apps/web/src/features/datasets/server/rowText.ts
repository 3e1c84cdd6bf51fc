import { formatPath } from "@troupe/contracts";

/**
 * Text in a dataset row that the runtime can only fail on: a lone UTF-16 surrogate (JSON's
 * `"\ud800"` escape) parses in JavaScript and in Python alike, but is not Unicode, so the first
 * tokenizer or file write that encodes it to UTF-8 raises (`UnicodeEncodeError` at step 1, after
 * the upload had answered 201). Found at upload instead, with the row's line and the field.
 */

const LONE_SURROGATE = /\p{Cs}/u;
const MAX_DEPTH = 64;

/** Path (`prompt`, `messages.0.content`) of the first value holding a lone surrogate, or null. */
export function loneSurrogateField(value: unknown, path: (string | number)[] = []): string | null {
  if (typeof value === "string") return LONE_SURROGATE.test(value) ? formatPath(path) : null;
  if (typeof value !== "object" || value === null || path.length > MAX_DEPTH) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = loneSurrogateField(value[i], [...path, i]);
      if (found !== null) return found;
    }
    return null;
  }
  if (value instanceof Uint8Array || value instanceof Date) return null;
  for (const [key, item] of Object.entries(value)) {
    const found = loneSurrogateField(item, [...path, key]);
    if (found !== null) return found;
  }
  return null;
}
