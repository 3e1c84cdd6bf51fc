/**
 * A log line as a terminal shows it. Progress bars (tqdm) redraw themselves with carriage returns: one
 * stored line holds every redraw, `10%|█ | 1/10\r20%|██ | 2/10\r…`, which the Logs tab printed end to end.
 * A `\r` moves back to the start of the line and what follows overwrites what was there (a shorter redraw
 * leaves the longer one's tail, as in a terminal); a trailing `\r` changes nothing.
 */
export function terminalLine(text: string): string {
  if (!text.includes("\r")) return text;
  let shown = "";
  for (const segment of text.split("\r")) shown = segment + shown.slice(segment.length);
  return shown;
}
