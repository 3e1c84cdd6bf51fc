import { isTerminal } from "@troupe/contracts";
import { runEventFeed } from "../../../../../features/live/server/runEventFeed";
import { HEARTBEAT_MS, parseCursor, SSE_HEARTBEAT, SSE_RETRY_MS, sseMessage } from "../../../../../features/live/server/sse";
import { authenticateRequest } from "../../../../../features/auth/server/requestAuth";
import { getDb } from "../../../../../server/db";
import { dependencyDown } from "../../../../../server/dependencyErrors";
import { textProblem } from "../../../../../server/inputText";
import { createRedisConnection } from "../../../../../server/redis";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/**
 * Live events of one run as Server-Sent Events: backfill from Postgres after the client's cursor,
 * then follow the run's Redis stream; ends after the terminal status event.
 */
export async function GET(request: Request, { params }: { params: Promise<{ id: string }> }) {
  const db = getDb();
  // Who is calling comes before anything about the run is looked up (any signed-in role may watch).
  let auth;
  try {
    auth = await authenticateRequest(db, request);
  } catch (error) {
    const down = dependencyDown(error);
    if (down) return Response.json({ error: `${down} is unreachable; try again shortly` }, { status: 503, headers: { "retry-after": "5" } });
    throw error;
  }
  if (!auth) return Response.json({ error: "sign in first (session cookie or `Authorization: Bearer <token>`)" }, { status: 401 });
  const { id } = await params;
  const idProblem = textProblem(id);
  if (idProblem) return Response.json({ error: `run id ${idProblem}` }, { status: 400 });
  const url = new URL(request.url);
  const after = parseCursor(request.headers.get("last-event-id"), url.searchParams.get("after"));
  if (after === null) {
    return Response.json({ error: "`after` (or Last-Event-ID) must be a non-negative integer" }, { status: 400 });
  }
  const run = await db.run.findUnique({ where: { id }, select: { status: true, lastSeq: true } });
  if (!run) return Response.json({ error: `run ${id} not found` }, { status: 404 });
  // A finished run whose events the client already has: 204 tells EventSource to stop reconnecting.
  if (isTerminal(run.status) && after >= run.lastSeq) return new Response(null, { status: 204 });

  const redis = createRedisConnection();
  const abort = new AbortController();
  const encoder = new TextEncoder();
  let heartbeat: ReturnType<typeof setInterval> | undefined;

  const stop = () => {
    if (abort.signal.aborted) return;
    abort.abort();
    clearInterval(heartbeat);
    redis.disconnect(); // also rejects a pending blocking read
  };
  request.signal.addEventListener("abort", stop);

  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (text: string) => {
        if (!abort.signal.aborted) controller.enqueue(encoder.encode(text));
      };
      send(`retry: ${SSE_RETRY_MS}\n\n`);
      heartbeat = setInterval(() => send(SSE_HEARTBEAT), HEARTBEAT_MS);
      try {
        for await (const event of runEventFeed({ db, redis, runId: id, after, signal: abort.signal })) {
          send(sseMessage(event));
        }
      } catch (error) {
        if (!abort.signal.aborted) console.error(`[sse] run ${id}:`, error);
      } finally {
        const wasOpen = !abort.signal.aborted;
        stop();
        if (wasOpen) controller.close();
      }
    },
    cancel() {
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
