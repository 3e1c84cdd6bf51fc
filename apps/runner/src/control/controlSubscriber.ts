import { RUN_CONTROL_CHANNEL, RunControlMessage } from "@troupe/contracts";
import { Redis } from "ioredis";
import type { ActiveRun } from "../context";
import type { RunnerLog } from "../log";

/**
 * Listens on RUN_CONTROL_CHANNEL for `{ runId, action }` and, if this runner supervises the run
 * (other runners' runs are ignored), stops it (`cancel`) or forwards `pause` / `resume` /
 * `stop_after_step` to the runtime's control fd. Pub/sub is fire-and-forget: the
 * heartbeat's read of Run.cancelRequestedAt catches a message missed while disconnected.
 */
export async function startControlSubscriber(
  redisUrl: string,
  active: ReadonlyMap<string, ActiveRun>,
  log: RunnerLog,
): Promise<{ close(): Promise<void> }> {
  const subscriber = new Redis(redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
  subscriber.on("error", (error) => log.warn(`control subscriber: ${error.message}`));
  subscriber.on("message", (_channel: string, message: string) => {
    const parsed = parseControlMessage(message);
    if (!parsed.ok) {
      log.warn(`ignored a malformed control message (${parsed.reason}): ${message.slice(0, 200)}`);
      return;
    }
    const run = active.get(parsed.value.runId);
    if (!run) return;
    const { action } = parsed.value;
    if (action === "cancel") run.requestStop("cancel");
    else run.control(action);
  });
  await subscriber.connect();
  await subscriber.subscribe(RUN_CONTROL_CHANNEL);
  return {
    async close() {
      await subscriber.quit().catch(() => subscriber.disconnect());
    },
  };
}

export function parseControlMessage(message: string): { ok: true; value: RunControlMessage } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(message);
  } catch {
    return { ok: false, reason: "not JSON" };
  }
  const result = RunControlMessage.safeParse(json);
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0]!;
  return { ok: false, reason: `${issue.path.join(".") || "message"}: ${issue.message}` };
}
