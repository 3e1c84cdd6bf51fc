/**
 * Where in the code an error message points ("line 3, column 29: …", or a server's "… at line 3"), so the
 * editor's squiggle sits where the message says; it sat on line 1 whatever the message said. A message
 * with no position marks line 1 (the code as a whole).
 */
export function messagePosition(message: string): { line: number; column: number } {
  const m = /\bline (\d+)(?:, column (\d+))?/i.exec(message);
  if (!m) return { line: 1, column: 1 };
  return { line: Math.max(1, Number(m[1])), column: m[2] ? Math.max(1, Number(m[2])) : 1 };
}
