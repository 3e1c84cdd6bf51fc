import type { IncomingMessage, ServerResponse } from "node:http";
import { NextRequest } from "next/server";
import { proxy } from "../../src/proxy";

/**
 * The app's proxy (`src/proxy.ts`, what Next runs in front of every route) for the test servers:
 * a request it answers itself (a foreign Host, a cross-origin write, a malformed path, an over-long
 * URL) is answered here with its response; otherwise the route runs. Returns whether it answered.
 */
export async function answeredByProxy(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) for (const value of v === undefined ? [] : Array.isArray(v) ? v : [v]) headers.append(k, value);
  const response = proxy(new NextRequest(url, { method: req.method, headers }));
  if (response.headers.get("x-middleware-next") === "1") return false;
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
  return true;
}
