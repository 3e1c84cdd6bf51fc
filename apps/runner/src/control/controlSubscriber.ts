import { RunControlMessage, runControlChannel } from "@troupe/contracts";
import { Redis } from "ioredis";
import type { ActiveRun } from "../context";
import type { RunnerLog } from "../log";

/**
 * Listens on this install's control channel (`runControlChannel` of the Redis database index in
 * `redisUrl`, so another install on the same Redis server is not heard) for `{ runId, action }`
 * and, if this runner supervises the run (other runners' runs are ignored), stops it (`cancel`) or
 * takes the pause / resume / stop-after-step stored on the Run row and forwards it to the runtime's
 * control fd (the message only wakes it; the row is the command, taken once). Pub/sub is
 * fire-and-forget: the heartbeat's read of Run.cancelRequestedAt and Run.controlRequest catches a
 * message missed while disconnected.
 */
export async function startControlSubscriber(
  redisUrl: string,
  active: ReadonlyMap<string, ActiveRun>,
  log: RunnerLog,
): Promise<{ channel: string; close(): Promise<void> }> {
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
    else void run.applyRequestedControl();
  });
  const channel = runControlChannel(subscriber.options.db ?? 0);
  await subscriber.connect();
  await subscriber.subscribe(channel);
  return {
    channel,
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
