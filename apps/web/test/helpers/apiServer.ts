import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { MAX_HTTP_HEADER_BYTES } from "../../src/lib/requestShape";
import { answeredByProxy } from "./proxyGate";
import { QUEUES } from "@troupe/contracts";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { serviceUrls, uniqueId } from "./services";

/**
 * The REST API over real HTTP for tests.
 *
 * - `TROUPE_API_TEST_URL` set (e.g. a `next start` of a fresh build): the tests talk to that server.
 * - Otherwise an HTTP server in the test process dispatches to the very route modules of
 *   `src/app/api/v1/**` (the files Next serves), so the suite always tests the current code without
 *   a `next build` first (CI runs vitest before the build). The queue can be isolated under a test
 *   prefix, so a runner on the same Redis never sees these jobs.
 */

type RouteModule = Record<string, unknown>;
type Handler = (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response> | Response;

const ROUTES: [RegExp, () => Promise<RouteModule>][] = [
  [/^\/api\/v1\/health$/, () => import("../../src/app/api/v1/health/route")],
  [/^\/api\/v1\/openapi\.json$/, () => import("../../src/app/api/v1/openapi.json/route")],
  [/^\/api\/v1\/docs$/, () => import("../../src/app/api/v1/docs/route")],
  [/^\/api\/v1\/runs$/, () => import("../../src/app/api/v1/runs/route")],
  [/^\/api\/v1\/runs\/(?<id>[^/]+)$/, () => import("../../src/app/api/v1/runs/[id]/route")],
  [/^\/api\/v1\/runs\/(?<id>[^/]+)\/wait$/, () => import("../../src/app/api/v1/runs/[id]/wait/route")],
  [/^\/api\/v1\/runs\/(?<id>[^/]+)\/metrics$/, () => import("../../src/app/api/v1/runs/[id]/metrics/route")],
  [/^\/api\/v1\/runs\/(?<id>[^/]+)\/episodes$/, () => import("../../src/app/api/v1/runs/[id]/episodes/route")],
  [/^\/api\/v1\/runs\/(?<id>[^/]+)\/advisories$/, () => import("../../src/app/api/v1/runs/[id]/advisories/route")],
  [/^\/api\/v1\/runs\/(?<id>[^/]+)\/cancel$/, () => import("../../src/app/api/v1/runs/[id]/cancel/route")],
  [/^\/api\/v1\/runs\/(?<id>[^/]+)\/pause$/, () => import("../../src/app/api/v1/runs/[id]/pause/route")],
  [/^\/api\/v1\/runs\/(?<id>[^/]+)\/resume$/, () => import("../../src/app/api/v1/runs/[id]/resume/route")],
  [/^\/api\/v1\/runs\/(?<id>[^/]+)\/stop$/, () => import("../../src/app/api/v1/runs/[id]/stop/route")],
  [/^\/api\/v1\/runs\/(?<id>[^/]+)\/collect$/, () => import("../../src/app/api/v1/runs/[id]/collect/route")],
  [/^\/api\/v1\/datasets$/, () => import("../../src/app/api/v1/datasets/route")],
  [/^\/api\/v1\/(?<rest>.+)$/, () => import("../../src/app/api/v1/[...rest]/route")],
];

async function dispatch(req: IncomingMessage, res: ServerResponse, base: string): Promise<void> {
  // Next keeps the path as sent (percent-escapes and all) and runs the proxy before any route.
  const url = new URL(req.url ?? "/", base);
  if (await answeredByProxy(req, res, url)) return;
  const abort = new AbortController();
  res.on("close", () => abort.abort());
  const route = ROUTES.find(([pattern]) => pattern.test(url.pathname));
  const module = route ? await route[1]() : undefined;
  const handler = module?.[req.method ?? "GET"] as Handler | undefined;
  if (!route || !handler) {
    res.writeHead(route ? 405 : 404).end();
    return;
  }
  const params = Object.fromEntries(
    Object.entries(route[0].exec(url.pathname)?.groups ?? {}).map(([k, v]) => [k, decodeURIComponent(v)]),
  );
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const request = new Request(url, {
    method: req.method,
    headers: Object.entries(req.headers).flatMap(([k, v]) => (v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((x) => [k, x] as [string, string]))),
    body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined,
    signal: abort.signal,
    // @ts-expect-error -- Node's fetch needs `duplex` for a streamed body; the DOM types do not know it.
    duplex: "half",
  });
  const response = await handler(request, { params: Promise.resolve(params) });
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
}

export interface ApiServer {
  baseUrl: string;
  /** Where POST /runs puts its jobs (a test-only prefix in-process; the real queue for an external server). */
  queue: Queue;
  close(): Promise<void>;
}

export async function startApiServer(options: { isolateQueue: boolean }): Promise<ApiServer> {
  const { redisUrl } = serviceUrls();
  const external = process.env.TROUPE_API_TEST_URL;
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const isolated = options.isolateQueue && !external;
  const queue = new Queue(QUEUES.runs.name, { connection, ...(isolated ? { prefix: uniqueId("troupe-api-test") } : {}) });
  if (external) {
    return { baseUrl: external.replace(/\/+$/, ""), queue, close: () => queue.close() };
  }
  // The web's queue singleton (server/redis.ts caches it on globalThis): hand it ours.
  const cache = globalThis as unknown as { troupeWebRunQueue?: Queue };
  if (isolated) cache.troupeWebRunQueue = queue;
  // As the start scripts run Next: room for a long URL, which the proxy then answers with 414.
  const server = createServer({ maxHeaderSize: MAX_HTTP_HEADER_BYTES }, (req, res) => {
    dispatch(req, res, `http://${req.headers.host}`).catch((error) => {
      console.error("test API server:", error);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    queue,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (isolated) {
        await queue.obliterate({ force: true });
        delete cache.troupeWebRunQueue;
      }
      await queue.close();
    },
  };
}
