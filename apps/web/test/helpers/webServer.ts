import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { MAX_HTTP_HEADER_BYTES } from "../../src/lib/requestShape";
import { answeredByProxy } from "./proxyGate";
import { transformer } from "../../src/trpc/transformer";

/**
 * The browser-facing routes (tRPC, the live SSE stream, sign-in/out, invitations) served over real
 * loopback HTTP from the very route modules Next serves, so auth and input tests go through the
 * same request parsing, cookies and status codes a browser gets. (The REST API has its own: apiServer.ts.)
 */

type Handler = (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response> | Response;
type RouteModule = Record<string, unknown>;

const ROUTES: [RegExp, () => Promise<RouteModule>][] = [
  [/^\/api\/trpc\/(?<trpc>[^/]+)$/, () => import("../../src/app/api/trpc/[trpc]/route")],
  [/^\/api\/runs\/(?<id>[^/]+)\/events$/, () => import("../../src/app/api/runs/[id]/events/route")],
  [/^\/api\/auth\/sign-in$/, () => import("../../src/app/api/auth/sign-in/route")],
  [/^\/api\/auth\/sign-out$/, () => import("../../src/app/api/auth/sign-out/route")],
  [/^\/api\/auth\/accept-invite$/, () => import("../../src/app/api/auth/accept-invite/route")],
];

async function dispatch(req: IncomingMessage, res: ServerResponse, base: string): Promise<void> {
  // Next keeps the path as sent (percent-escapes and all) and runs the proxy before any route.
  const url = new URL(req.url ?? "/", base);
  if (await answeredByProxy(req, res, url)) return;
  const abort = new AbortController();
  res.on("close", () => abort.abort());
  const route = ROUTES.find(([pattern]) => pattern.test(url.pathname));
  const handler = (route ? (await route[1]())[req.method ?? "GET"] : undefined) as Handler | undefined;
  if (!route || !handler) {
    res.writeHead(route ? 405 : 404).end();
    return;
  }
  const params = Object.fromEntries(Object.entries(route[0].exec(url.pathname)?.groups ?? {}).map(([k, v]) => [k, decodeURIComponent(v)]));
  // As Next's server does: the socket's peer when the client sent no X-Forwarded-For.
  req.headers["x-forwarded-for"] ??= req.socket.remoteAddress;
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
  const headers = new Headers(response.headers);
  const cookies = response.headers.getSetCookie();
  headers.delete("set-cookie");
  res.writeHead(response.status, [...Object.entries(Object.fromEntries(headers)), ...cookies.map((c) => ["set-cookie", c] as [string, string])].flat());
  if (!response.body) return void res.end();
  // Stream (SSE): write chunks as they come; stop when the client goes.
  const reader = response.body.getReader();
  abort.signal.addEventListener("abort", () => void reader.cancel().catch(() => undefined));
  for (;;) {
    const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
    if (done) break;
    res.write(Buffer.from(value!));
  }
  res.end();
}

export interface WebServer {
  baseUrl: string;
  /** A tRPC call as the browser's client makes it (superjson-compatible body), with an optional cookie. */
  trpc(path: string, type: "query" | "mutation", input: unknown, cookie?: string): Promise<{ status: number; body: unknown; text: string }>;
  close(): Promise<void>;
}

export async function startWebServer(): Promise<WebServer> {
  // As the start scripts run Next: room for a long URL, which the proxy then answers with 414.
  const server = createServer({ maxHeaderSize: MAX_HTTP_HEADER_BYTES }, (req, res) => {
    dispatch(req, res, `http://${req.headers.host}`).catch((error) => {
      console.error("test web server:", error);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    async trpc(path, type, input, cookie) {
      const headers: Record<string, string> = cookie ? { cookie } : {};
      const payload = JSON.stringify(transformer.serialize(input));
      const response =
        type === "query"
          ? await fetch(`${baseUrl}/api/trpc/${path}?input=${encodeURIComponent(payload)}`, { headers })
          : await fetch(`${baseUrl}/api/trpc/${path}`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: payload });
      const text = await response.text();
      let body: unknown = null;
      try {
        const parsed = JSON.parse(text) as { result?: { data: Parameters<typeof transformer.deserialize>[0] }; error?: unknown };
        body = parsed.result ? { result: transformer.deserialize(parsed.result.data) } : parsed;
      } catch {
        body = text;
      }
      return { status: response.status, body, text };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
