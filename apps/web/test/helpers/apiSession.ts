import { afterAll, beforeAll } from "vitest";
import { startApiServer, type ApiServer } from "./apiServer";
import { apiCaller, OpenApiChecker } from "./openapi";
import { openServices, type TestServices } from "./services";

export interface ApiSession {
  services: TestServices;
  server: ApiServer;
  /** REST calls with a bearer token, each checked against the served OpenAPI document. */
  call: ReturnType<typeof apiCaller>;
}

/**
 * For a test file that drives the REST API: real services, an API server on its own port (with a
 * queue of its own) and a token, set up before the file's tests and removed after them. The fields
 * are filled in `beforeAll`: read them inside tests, not at import time.
 */
export function useApiSession(tokenLabel: string): ApiSession {
  const session = {} as ApiSession;
  beforeAll(async () => {
    session.services = openServices();
    session.server = await startApiServer({ isolateQueue: true });
    // An editor's token: it may launch and control runs (the REST API's highest role).
    const created = await session.services.apiToken("editor", tokenLabel);
    session.call = apiCaller(session.server.baseUrl, await OpenApiChecker.load(session.server.baseUrl), created.token);
  });
  afterAll(async () => {
    await session.server?.close();
    await session.services?.close();
  });
  return session;
}
