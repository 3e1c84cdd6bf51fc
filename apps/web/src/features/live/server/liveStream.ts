import { randomUUID } from "node:crypto";
import { isTerminal } from "@troupe/contracts";
import { serverEnv } from "../../../env";
import { getDb } from "../../../server/db";
import { dependencyDown } from "../../../server/dependencyErrors";
import { textProblem } from "../../../server/inputText";
import { createRedisConnection, getRedis } from "../../../server/redis";
import { authenticateRequest, type RequestAuth } from "../../auth/server/requestAuth";
import { runEventFeed } from "./runEventFeed";
import { RunFollowers } from "./runFollowers";
import { parseCursor, SSE_HEARTBEAT, SSE_RETRY_MS, sseMessage } from "./sse";
import { StreamSlots } from "./streamSlots";

/**
 * `GET /api/runs/:id/events`: a run's live events as Server-Sent Events. Backfill from Postgres
 * after the client's cursor, then follow the run through this process's one shared reader of its
 * Redis stream; ends after the terminal status event.
 *
 * What one caller may hold (issue 30): at most TROUPE_LIVE_STREAMS_PER_USER open streams per user
 * and TROUPE_LIVE_STREAMS_PER_TOKEN per API token (429 beyond), and the caller is checked again at
 * every heartbeat (TROUPE_LIVE_HEARTBEAT_MS): a disabled user, a changed role, a revoked token or
 * a signed-out session ends the stream within one heartbeat. A cursor past the run's last event,
 * or beyond any seq there can be, is refused (400) instead of waiting or looping forever.
 */

const cache = globalThis as unknown as { troupeWebRunFollowers?: RunFollowers; troupeWebStreamSlots?: StreamSlots };

/** This process's shared readers of run streams (one Redis connection per followed run). */
export function runFollowers(): RunFollowers {
  cache.troupeWebRunFollowers ??= new RunFollowers(() => createRedisConnection());
  return cache.troupeWebRunFollowers;
}

function heartbeatMs(): number {
  return serverEnv().TROUPE_LIVE_HEARTBEAT_MS;
}

function streamSlots(): StreamSlots {
  const env = serverEnv();
  cache.troupeWebStreamSlots ??= new StreamSlots(getRedis(), {
    perUser: env.TROUPE_LIVE_STREAMS_PER_USER,
    perToken: env.TROUPE_LIVE_STREAMS_PER_TOKEN,
    // A few missed renewals before a stream of a dead process stops counting.
    leaseMs: 3 * env.TROUPE_LIVE_HEARTBEAT_MS + 5000,
  });
  return cache.troupeWebStreamSlots;
}

const problem = (status: number, error: string, headers: Record<string, string> = {}) =>
  Response.json({ error }, { status, headers: { "cache-control": "no-store", ...headers } });

/** Why the caller may no longer hold this stream, or null while it may. */
function changedCaller(opened: RequestAuth, now: RequestAuth | null): string | null {
  if (!now || now.user.id !== opened.user.id) return opened.via === "token" ? "the token was revoked or its user disabled" : "signed out, or the user was disabled";
  if (now.tokenId !== opened.tokenId) return "the caller changed";
  if (now.user.role !== opened.user.role) return "the user's role changed";
  return null;
}

export async function handleLiveStream(request: Request, params: Promise<{ id: string }>): Promise<Response> {
  const db = getDb();
  // Who is calling comes before anything about the run is looked up (any signed-in role may watch).
  let auth: RequestAuth | null;
  try {
    auth = await authenticateRequest(db, request);
  } catch (error) {
    const down = dependencyDown(error);
    if (down) return problem(503, `${down} is unreachable; try again shortly`, { "retry-after": "5" });
    throw error;
  }
  if (!auth) return problem(401, "sign in first (session cookie or `Authorization: Bearer <token>`)");
  const caller = auth;
  const { id } = await params;
  const idProblem = textProblem(id);
  if (idProblem) return problem(400, `run id ${idProblem}`);
  const url = new URL(request.url);
  const after = parseCursor(request.headers.get("last-event-id"), url.searchParams.get("after"));
  if (after === null) return problem(400, "`after` (or Last-Event-ID) must be an integer from 0 to 2147483647");

  const run = await db.run.findUnique({ where: { id }, select: { status: true, lastSeq: true } });
  if (!run) return problem(404, `run ${id} not found`);
  // A finished run whose events the client already has: 204 tells EventSource to stop reconnecting.
  if (isTerminal(run.status) && after >= run.lastSeq) return new Response(null, { status: 204 });
  // Postgres stores an event before anyone can see it, so no client can hold a seq above lastSeq.
  if (after > run.lastSeq) return problem(400, `\`after\` (${after}) is past the run's last event (${run.lastSeq})`);

  const owner = { userId: caller.user.id, ...(caller.tokenId ? { tokenId: caller.tokenId } : {}) };
  const streamId = randomUUID();
  const slots = streamSlots();
  let admission;
  try {
    admission = await slots.acquire(owner, streamId);
  } catch (error) {
    const down = dependencyDown(error);
    if (down) return problem(503, `${down} is unreachable; try again shortly`, { "retry-after": "5" });
    throw error;
  }
  if (!admission.allowed) {
    const setting = admission.scope === "user" ? "TROUPE_LIVE_STREAMS_PER_USER" : "TROUPE_LIVE_STREAMS_PER_TOKEN";
    return problem(
      429,
      `this ${admission.scope} already has ${admission.limit} live streams open (${setting}); close one (another tab or client) first`,
      { "retry-after": String(Math.max(1, Math.ceil(heartbeatMs() / 1000))) },
    );
  }

  const watch = runFollowers().watch(id, after);
  const abort = new AbortController();
  const encoder = new TextEncoder();
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let clientGone = false;

  const stop = () => {
    if (abort.signal.aborted) return;
    abort.abort();
    clearInterval(heartbeat);
    watch.release();
    void slots.release(owner, streamId).catch(() => undefined);
  };
  request.signal.addEventListener("abort", () => {
    clientGone = true;
    stop();
  });

  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (text: string) => {
        if (!abort.signal.aborted) controller.enqueue(encoder.encode(text));
      };
      /** Ends the stream from our side, saying why in a comment line. */
      const end = (reason: string) => {
        send(`: closed: ${reason}\n\n`);
        stop();
      };
      let checking = false;
      const beat = async () => {
        if (checking || abort.signal.aborted) return;
        checking = true;
        try {
          send(SSE_HEARTBEAT);
          const now = await authenticateRequest(db, request).catch(() => undefined);
          if (now === undefined) return end("could not check who is calling");
          const changed = changedCaller(caller, now);
          if (changed) return end(changed);
          await slots.renew(owner, streamId).catch(() => undefined);
        } finally {
          checking = false;
        }
      };
      send(`retry: ${SSE_RETRY_MS}\n\n`);
      heartbeat = setInterval(() => void beat(), heartbeatMs());
      try {
        for await (const event of runEventFeed({ db, live: watch.after, runId: id, after, signal: abort.signal })) {
          send(sseMessage(event));
        }
      } catch (error) {
        if (!abort.signal.aborted) console.error(`[sse] run ${id}:`, error);
      } finally {
        stop();
        if (!clientGone) controller.close();
      }
    },
    cancel() {
      clientGone = true;
      stop();
    },
  });

  return new Response(body, {
    headers: {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache, no-transform",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    },
  });
}
