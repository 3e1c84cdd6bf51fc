import { appendToStream, storeEvents } from "@troupe/db";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteSession } from "../src/features/auth/server/sessions";
import { setUserDisabled, setUserRole } from "../src/features/auth/server/users";
import { runFollowers } from "../src/features/live/server/liveStream";
import { StreamSlots } from "../src/features/live/server/streamSlots";
import { revokeApiToken } from "../src/features/tokens/server/tokens";
import { createBareRun, metricEvents, openServices, type TestServices } from "./helpers/services";
import { sessionCookieFor, tokenFor } from "./helpers/users";
import { startWebServer, type WebServer } from "./helpers/webServer";

/**
 * What one caller may hold of the live streams (issue 30, findings 4 and 5), over real HTTP, Redis
 * and Postgres: a cap per user and per token (429 beyond it), one shared Redis reader per run in a
 * web process, the caller re-checked at every heartbeat, and cursors that cannot be served refused.
 */

const HEARTBEAT_MS = 300;
process.env.TROUPE_LIVE_HEARTBEAT_MS = String(HEARTBEAT_MS);
// The defaults, stated so the test reads at the cap.
process.env.TROUPE_LIVE_STREAMS_PER_USER = "20";
process.env.TROUPE_LIVE_STREAMS_PER_TOKEN = "10";

let services: TestServices;
let web: WebServer;

beforeAll(async () => {
  services = openServices();
  web = await startWebServer();
});
afterAll(async () => {
  await web?.close();
  await services?.close();
});

interface OpenStream {
  status: number;
  response: Response;
  /** Text received so far. */
  text(): string;
  /** A refusal's JSON body. */
  json(): Promise<{ error: string }>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

async function openStream(runId: string, headers: Record<string, string>, query = "after=0"): Promise<OpenStream> {
  const abort = new AbortController();
  const response = await fetch(`${web.baseUrl}/api/runs/${encodeURIComponent(runId)}/events?${query}`, { headers, signal: abort.signal });
  let received = "";
  const ended =
    response.body && response.status === 200
      ? (async () => {
          const reader = response.body!.getReader();
          const decoder = new TextDecoder();
          for (;;) {
            const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }));
            if (chunk.done) return;
            received += decoder.decode(chunk.value, { stream: true });
          }
        })()
      : response.text().then((t) => void (received = t));
  const json = async () => {
    await ended;
    return JSON.parse(received) as { error: string };
  };
  return { status: response.status, response, text: () => received, json, ended, close: () => abort.abort() };
}

async function within<T>(ms: number, promise: Promise<T>): Promise<"ended" | "timeout"> {
  return Promise.race([promise.then(() => "ended" as const), new Promise<"timeout">((r) => setTimeout(() => r("timeout"), ms))]);
}

async function until(check: () => Promise<boolean> | boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function viewerCookie(label: string) {
  const user = await services.user("viewer", label);
  return { user, cookie: await sessionCookieFor(services.db, user.id) };
}

describe("live stream caps", () => {
  it("a 21st stream of one user gets 429 with Retry-After; closing one frees its slot; other users are not affected", async () => {
    const runId = await createBareRun(services);
    const { cookie } = await viewerCookie("live-cap");
    const open = await Promise.all(Array.from({ length: 20 }, () => openStream(runId, { cookie })));
    try {
      expect(open.map((s) => s.status)).toEqual(Array(20).fill(200));
      const refused = await openStream(runId, { cookie });
      expect(refused.status).toBe(429);
      expect(Number(refused.response.headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await refused.json()).error).toMatch(/already has 20 live streams open \(TROUPE_LIVE_STREAMS_PER_USER\)/);

      const other = await viewerCookie("live-cap-other");
      const theirs = await openStream(runId, { cookie: other.cookie });
      expect(theirs.status).toBe(200);
      theirs.close();

      open.pop()!.close();
      let again: OpenStream | undefined;
      await until(async () => {
        again = await openStream(runId, { cookie });
        if (again.status !== 200) await again.ended;
        return again.status === 200;
      });
      open.push(again!);
    } finally {
      for (const s of open) s.close();
    }
  });

  it("an API token holds at most 10 (TROUPE_LIVE_STREAMS_PER_TOKEN); the 11th gets 429", async () => {
    const runId = await createBareRun(services);
    const { token } = await services.apiToken("viewer", "live-token-cap");
    const headers = { authorization: `Bearer ${token}` };
    const open = await Promise.all(Array.from({ length: 10 }, () => openStream(runId, headers)));
    try {
      expect(open.map((s) => s.status)).toEqual(Array(10).fill(200));
      const refused = await openStream(runId, headers);
      expect(refused.status).toBe(429);
      expect((await refused.json()).error).toMatch(/TROUPE_LIVE_STREAMS_PER_TOKEN/);
    } finally {
      for (const s of open) s.close();
    }
  });
});

describe("stream slots (Redis leases)", () => {
  it("a stream whose process died stops counting when its lease runs out; a renewed one keeps its slot", async () => {
    const slots = new StreamSlots(services.redis, { perUser: 2, perToken: 1, leaseMs: 400 });
    const owner = { userId: `slots-${Date.now()}-${Math.random()}` };
    expect(await slots.acquire(owner, "a")).toEqual({ allowed: true });
    expect(await slots.acquire(owner, "b")).toEqual({ allowed: true });
    expect(await slots.acquire(owner, "c")).toEqual({ allowed: false, scope: "user", limit: 2 });
    // "a" is renewed (its process lives); "b" is not (its process died without releasing it).
    await new Promise((r) => setTimeout(r, 250));
    await slots.renew(owner, "a");
    await new Promise((r) => setTimeout(r, 250));
    expect(await slots.acquire(owner, "c")).toEqual({ allowed: true });
    expect(await slots.acquire(owner, "d")).toEqual({ allowed: false, scope: "user", limit: 2 });
    await slots.release(owner, "a");
    // A token's own cap, on top of its user's.
    const tokenOwner = { ...owner, tokenId: "t1" };
    expect(await slots.acquire(tokenOwner, "e")).toEqual({ allowed: true });
    expect(await slots.acquire(tokenOwner, "f")).toEqual({ allowed: false, scope: "user", limit: 2 });
    await slots.release(owner, "c");
    expect(await slots.acquire(tokenOwner, "g")).toEqual({ allowed: false, scope: "token", limit: 1 });
  });
});

describe("one shared Redis reader per run", () => {
  it("8 streams of one run use one follower connection, and each gets every event once", async () => {
    // Connections to this test's Redis database (other databases' clients are other sessions').
    const dbIndex = new URL(process.env.REDIS_URL!).pathname.slice(1) || "0";
    const clients = async () => ((await services.redis.client("LIST")) as string).split("\n").filter((line) => line.includes(` db=${dbIndex} `)).length;
    const runId = await createBareRun(services);
    const { cookie } = await viewerCookie("live-shared");
    // Warm the shared short-command connection first, so only the follower can be new.
    const warm = await openStream(runId, { cookie });
    warm.close();
    await until(() => runFollowers().size === 0);
    const before = await clients();
    const streams = await Promise.all(Array.from({ length: 8 }, () => openStream(runId, { cookie })));
    try {
      expect(streams.map((s) => s.status)).toEqual(Array(8).fill(200));
      expect(runFollowers().size).toBe(1);
      const live = metricEvents(2, 6, "succeeded");
      await storeEvents(services.db, runId, live);
      await appendToStream(services.redis, runId, live);
      for (const s of streams) expect(await within(5000, s.ended)).toBe("ended");
      for (const s of streams) {
        const ids = [...s.text().matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
        expect(ids).toEqual([1, 2, 3, 4, 5, 6]);
      }
      const added = (await clients()) - before;
      console.log(`[measured] 8 live streams of one run added ${added} Redis connection(s)`);
      expect(added).toBeLessThanOrEqual(1);
    } finally {
      for (const s of streams) s.close();
    }
    // The last watcher out closes the follower.
    await until(() => runFollowers().size === 0);
  });
});

describe("the caller is checked again at every heartbeat", () => {
  const closesWithinOneHeartbeat = async (stream: OpenStream, change: () => Promise<unknown>) => {
    expect(stream.status).toBe(200);
    // Past the first heartbeat: the stream is live and checked.
    await until(() => stream.text().includes(": heartbeat"));
    const t0 = performance.now();
    await change();
    // One heartbeat, plus the time of the check's own queries on a busy machine.
    expect(await within(HEARTBEAT_MS + 1000, stream.ended)).toBe("ended");
    return { elapsedMs: performance.now() - t0, text: stream.text() };
  };

  it("disabling the user ends their open stream; events written afterwards never reach it", async () => {
    const runId = await createBareRun(services);
    const { user, cookie } = await viewerCookie("live-disable");
    const stream = await openStream(runId, { cookie });
    const { text, elapsedMs } = await closesWithinOneHeartbeat(stream, () => setUserDisabled(services.db, user.id, true));
    console.log(`[measured] a disabled user's stream ended ${elapsedMs.toFixed(0)} ms after the change (heartbeat ${HEARTBEAT_MS} ms)`);
    expect(text).toMatch(/: closed: signed out, or the user was disabled/);
    const after = metricEvents(2, 30);
    await storeEvents(services.db, runId, after);
    await appendToStream(services.redis, runId, after);
    expect(stream.text()).not.toMatch(/^id: 2$/m);
    // And it cannot open a new one.
    expect((await openStream(runId, { cookie })).status).toBe(401);
  });

  it("a changed role, a revoked token and signing out each end the stream within one heartbeat", async () => {
    const runId = await createBareRun(services);
    const { user, cookie } = await viewerCookie("live-role");
    const roleChanged = await closesWithinOneHeartbeat(await openStream(runId, { cookie }), () => setUserRole(services.db, user.id, "editor"));
    expect(roleChanged.text).toMatch(/: closed: the user's role changed/);
    // Reconnecting with the new role works.
    const reopened = await openStream(runId, { cookie });
    expect(reopened.status).toBe(200);
    reopened.close();

    const { token, tokenId } = await tokenFor(services.db, user.id);
    const revoked = await closesWithinOneHeartbeat(await openStream(runId, { authorization: `Bearer ${token}` }), () => revokeApiToken(services.db, tokenId, null));
    expect(revoked.text).toMatch(/: closed: the token was revoked/);

    const secret = cookie.split("=")[1]!;
    await closesWithinOneHeartbeat(await openStream(runId, { cookie }), () => deleteSession(services.db, secret));
  });
});

describe("cursors", () => {
  it("out of range or past the run's last event: 400; past the end of a finished run: 204; never an open stream", async () => {
    const runId = await createBareRun(services); // running, lastSeq 1
    const { cookie } = await viewerCookie("live-cursor");
    for (const query of ["after=2147483648", "after=9999999999", "after=-1", "after=1e3", "after=2", "after=2147483647"]) {
      const stream = await openStream(runId, { cookie }, query);
      expect(stream.status, query).toBe(400);
    }
    const header = await openStream(runId, { cookie, "last-event-id": "2147483648" }, "");
    expect(header.status).toBe(400);
    expect((await header.json()).error).toMatch(/from 0 to 2147483647/);
    // At the last event: a live stream that waits for the next one.
    const atEnd = await openStream(runId, { cookie }, "after=1");
    expect(atEnd.status).toBe(200);
    atEnd.close();

    const finished = await createBareRun(services);
    const end = metricEvents(2, 4, "succeeded");
    await storeEvents(services.db, finished, end);
    await services.db.run.update({ where: { id: finished }, data: { status: "succeeded" } });
    for (const query of ["after=4", "after=5", "after=2147483647"]) {
      expect((await openStream(finished, { cookie }, query)).status, query).toBe(204);
    }
    expect((await openStream(finished, { cookie }, "after=2147483648")).status).toBe(400);
  });
});

describe("Redis unreachable", () => {
  it("a new live stream answers 503 with Retry-After (its slot cannot be counted), not 500", async () => {
    const runId = await createBareRun(services);
    const { cookie } = await viewerCookie("live-redis-down");
    const cache = globalThis as unknown as { troupeWebRedis?: Redis; troupeWebStreamSlots?: unknown };
    const real = { redis: cache.troupeWebRedis, slots: cache.troupeWebStreamSlots };
    const dead = new Redis("redis://127.0.0.1:1", { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true });
    dead.on("error", () => undefined);
    cache.troupeWebRedis = dead;
    delete cache.troupeWebStreamSlots;
    try {
      const stream = await openStream(runId, { cookie });
      expect(stream.status).toBe(503);
      expect(stream.response.headers.get("retry-after")).toBe("5");
      expect((await stream.json()).error).toMatch(/Redis is unreachable/);
    } finally {
      cache.troupeWebRedis = real.redis;
      cache.troupeWebStreamSlots = real.slots;
      dead.disconnect();
    }
  });
});
