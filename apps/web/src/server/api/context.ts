import { cookies, headers } from "next/headers";
import { authenticateRequest, type RequestAuth } from "../../features/auth/server/requestAuth";
import { getDb } from "../db";
import { getRedis, getRunQueue } from "../redis";
import type { TRPCContext } from "./trpc";

/** The context of a request served by this process: the process-wide singletons and the caller. */
export function createRequestContext(auth: RequestAuth | null): TRPCContext {
  return { db: getDb(), redis: getRedis(), runQueue: getRunQueue(), auth };
}

/** The caller of the request being rendered (server components), from its cookie or bearer token. */
export async function currentRequestAuth(): Promise<RequestAuth | null> {
  const [cookieStore, headerList] = await Promise.all([cookies(), headers()]);
  const request = new Request("http://server-component.invalid/", {
    headers: { cookie: cookieStore.toString(), authorization: headerList.get("authorization") ?? "" },
  });
  if (!headerList.get("authorization")) request.headers.delete("authorization");
  return authenticateRequest(getDb(), request);
}

/** A context for a server component (run page prefetch): the same checks as a browser's request. */
export async function createServerComponentContext(): Promise<TRPCContext> {
  return createRequestContext(await currentRequestAuth());
}
