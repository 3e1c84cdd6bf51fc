/** Starting code for a new reward, per scope: the signature the runtime calls it with. */
export const COMPLETION_TEMPLATE = `def reward(prompt: str, completion: str, **row) -> float:
    """Score one completion; higher is better. \`row\` holds the dataset row's columns."""
    answer = str(row.get("answer", "")).strip()
    return 1.0 if completion.strip() == answer else 0.0
`;

export const CONVERSATION_TEMPLATE = `def reward(conversation: list[dict], actor_name: str, **row) -> float:
    """Score one actor's part of a conversation; each message is {"actor": ..., "content": ...}."""
    mine = [m["content"] for m in conversation if m["actor"] == actor_name]
    return 1.0 if mine and mine[-1].strip() else 0.0
`;

/** The line of the user's code a Python traceback points at last (`File "<reward code>", line N`). */
export function tracebackLine(traceback: string): { line: number; message: string } | null {
  const matches = [...traceback.matchAll(/File "<reward code>", line (\d+)/g)];
  const last = matches.at(-1);
  if (!last) return null;
  const message = traceback.trim().split("\n").at(-1) ?? "error";
  return { line: Number(last[1]), message };
}

/**
 * A traceback as the author of the code needs it: the frames of Troupe's own worker before the
 * first frame of the user's code are dropped (they are the same in every error). A traceback that
 * never reaches the user's code (e.g. a worker killed for memory) is shown whole.
 */
export function userTraceback(traceback: string): string {
  const lines = traceback.split("\n");
  const first = lines.findIndex((l) => l.includes('File "<reward code>"'));
  if (first <= 1 || !/^Traceback/.test(lines[0] ?? "")) return traceback;
  return [lines[0], ...lines.slice(first)].join("\n");
}
