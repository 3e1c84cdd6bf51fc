/**
 * Tags as typed: comma-separated, trimmed, empty pieces and repeats dropped. The text box keeps what the
 * person typed (a trailing comma or space included) and only the parsed list goes to the spec; showing
 * the list re-joined while typing ate the comma, so `walk, relay` was saved as one tag `walkrelay`.
 */
export function parseTags(text: string): string[] {
  return [...new Set(text.split(",").map((t) => t.trim()).filter(Boolean))];
}

export function formatTags(tags: readonly string[]): string {
  return tags.join(", ");
}

/** Whether the text still says these tags (then it is kept as typed instead of being re-formatted). */
export function textMatchesTags(text: string, tags: readonly string[]): boolean {
  const parsed = parseTags(text);
  return parsed.length === tags.length && parsed.every((t, i) => t === tags[i]);
}
