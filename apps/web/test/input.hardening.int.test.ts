import { createDb } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openServices, type TestServices } from "./helpers/services";
import { sessionCookieFor, tokenFor } from "./helpers/users";
import { startWebServer, type WebServer } from "./helpers/webServer";
import { startApiServer, type ApiServer } from "./helpers/apiServer";

/**
 * Bad input is a 4xx naming the field, never a 500: NUL characters and lone surrogates (Postgres
 * cannot store them), a YAML alias bomb, keys named like Object.prototype members (a dataset column
 * named `constructor` used to blank the Datasets page for everyone); and an unreachable Postgres is
 * a 503, not a 500. Over loopback HTTP through the routes Next serves.
 */

let services: TestServices;
let web: WebServer;
let api: ApiServer;
let cookie: string;
let token: string;
const datasetNames: string[] = [];

beforeAll(async () => {
  services = openServices();
  web = await startWebServer();
  api = await startApiServer({ isolateQueue: true });
  const editor = await services.user("editor", "hardening");
  cookie = await sessionCookieFor(services.db, editor.id);
  token = (await tokenFor(services.db, editor.id)).token;
});
afterAll(async () => {
  await services.db.dataset.deleteMany({ where: { name: { in: datasetNames } } });
  await web?.close();
  await api?.close();
  await services?.close();
});

const rest = (method: string, path: string, body?: string, contentType = "application/json") =>
  fetch(`${api.baseUrl}/api/v1${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { "content-type": contentType } : {}) }, body });

const NUL = "a\u0000b";
const LONE = "a\ud800b";

describe("text Postgres cannot store", () => {
  it("tRPC: NUL or a lone surrogate in a value or a key is 400 naming its path", async () => {
    for (const [input, path] of [
      [{ spec: { name: NUL } }, "spec.name"],
      [{ spec: { tags: ["ok", LONE] } }, "spec.tags.1"],
      [{ spec: { rewards: [{ ["k" + "\u0000"]: 1 }] } }, "spec.rewards.0"],
    ] as const) {
      const r = await web.trpc("experiment.create", "mutation", input, cookie);
      expect(r.status, JSON.stringify(input)).toBe(400);
      expect(r.text).toContain(path);
    }
    for (const name of [NUL, LONE]) {
      expect((await web.trpc("run.list", "query", { search: name }, cookie)).status).toBe(400);
      expect((await web.trpc("run.byId", "query", { runId: name }, cookie)).status).toBe(400);
    }
  });

  it("REST: in a path, a query, a JSON or YAML body, or a JSONL column name, it is 400", async () => {
    expect((await rest("GET", "/runs/a%00b")).status).toBe(400);
    expect((await rest("GET", "/runs?tag=a%00b")).status).toBe(400);
    const spec = JSON.stringify({ specVersion: 1, name: NUL });
    const bodyNul = await rest("POST", "/runs", spec);
    expect(bodyNul.status).toBe(400);
    expect(((await bodyNul.json()) as { errors: { path: string }[] }).errors[0]!.path).toBe("name");
    expect((await rest("POST", "/runs", '{"specVersion":1,"name":"a\\ud800b"}')).status).toBe(400);
    expect((await rest("POST", "/runs", 'specVersion: 1\nname: "a\\0b"\n', "application/yaml")).status).toBe(400);
    const upload = await rest("POST", "/datasets?name=nul_key&format=jsonl", '{"ok":1}\n{"bad\\u0000key":2}\n', "application/x-ndjson");
    expect(upload.status).toBe(400);
    expect(await upload.text()).toMatch(/line 2/);
    expect((await rest("POST", "/datasets?name=nul%00name&format=jsonl", '{"a":1}\n', "application/x-ndjson")).status).toBe(400);
  });

  it("SSE: a NUL in the run id is 400, not a driver error", async () => {
    const r = await fetch(`${web.baseUrl}/api/runs/a%00b/events`, { headers: { cookie } });
    expect(r.status).toBe(400);
  });
});

describe("YAML alias bomb", () => {
  it("is 400 saying why, quickly, instead of a 500 or a blown heap", async () => {
    const bomb = ["specVersion: 1", "a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 0; i < 9; i++) bomb.push(`${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}]`);
    const started = Date.now();
    const r = await rest("POST", "/runs", bomb.join("\n") + "\n", "application/yaml");
    expect(r.status).toBe(400);
    expect(await r.text()).toMatch(/alias/i);
    expect(Date.now() - started).toBeLessThan(10_000);
    // The composer's import uses the same parser.
    const imported = await web.trpc("experiment.importSpec", "mutation", { format: "yaml", text: bomb.join("\n") }, cookie);
    expect(imported.status).toBeLessThan(500);
  });
});

describe("keys named like Object.prototype members", () => {
  it("a dataset with columns constructor, __proto__ and prototype uploads, lists and previews; the list still works for everyone", async () => {
    const name = `proto_keys_${Date.now()}`;
    datasetNames.push(name);
    const jsonl = '{"constructor":"c","__proto__":"p","prototype":1,"~~x":2,"prompt":"hi"}\n{"constructor":"d","__proto__":"q","prototype":2,"~~x":3,"prompt":"yo"}\n';
    const upload = await web.trpc("dataset.upload", "mutation", { name, format: "jsonl", contentBase64: Buffer.from(jsonl).toString("base64") }, cookie);
    expect(upload.status, upload.text).toBe(200);
    const list = await web.trpc("dataset.list", "query", undefined, cookie);
    expect(list.status, list.text).toBe(200);
    const item = (list.body as { result: { items: { id: string; name: string; columns: string[]; columnTypes: Record<string, string> }[] } }).result.items.find((d) => d.name === name)!;
    expect(item.columns, JSON.stringify(item)).toEqual(["constructor", "__proto__", "prototype", "~~x", "prompt"]);
    // A map (jsonb keeps no key order). `__proto__` is dropped by zod's record output check (the
    // page shows "?" for its type, read with own()); what matters is that nothing throws.
    expect(Object.keys(item.columnTypes).sort()).toEqual(["constructor", "prompt", "prototype", "~~x"]);
    expect(item.columnTypes.constructor).toBe("string");
    expect(Object.getPrototypeOf(item.columnTypes)).toBe(Object.prototype);
    const preview = await web.trpc("dataset.preview", "query", { id: item.id, limit: 5 }, cookie);
    expect(preview.status, preview.text).toBe(200);
    const rows = (preview.body as { result: { rows: Record<string, unknown>[] } }).result.rows;
    expect(rows[0]).toMatchObject({ constructor: "c", prototype: 1, "~~x": 2, prompt: "hi" });
    // zod's record check drops an own `__proto__` key; it must never become the row's prototype.
    expect(Object.getPrototypeOf(rows[0])).toBe(Object.prototype);
  });
});

describe("Postgres unreachable", () => {
  it("tRPC, REST, the live stream and sign-in answer 503 (not 500) while it is down", async () => {
    const cache = globalThis as unknown as { troupeWebDb?: unknown };
    const real = cache.troupeWebDb;
    const dead = createDb("postgresql://postgres@127.0.0.1:1/troupe_down");
    cache.troupeWebDb = dead;
    try {
      expect((await web.trpc("run.list", "query", {}, cookie)).status).toBe(503);
      const restDown = await rest("GET", "/runs");
      expect(restDown.status).toBe(503);
      expect(restDown.headers.get("retry-after")).toBe("5");
      expect((await fetch(`${web.baseUrl}/api/runs/x/events`, { headers: { cookie } })).status).toBe(503);
      const signIn = await fetch(`${web.baseUrl}/api/auth/sign-in`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "a@b.c", password: "whatever12" }) });
      expect(signIn.status).toBe(503);
    } finally {
      cache.troupeWebDb = real;
      await dead.$disconnect();
    }
    // A procedure whose own query fails on a dead database (the caller authenticated already).
    const caller = (await import("../src/server/api/root")).createCaller({ ...services.ctx, db: createDb("postgresql://postgres@127.0.0.1:1/troupe_down") });
    await expect(caller.run.list({})).rejects.toMatchObject({ code: "SERVICE_UNAVAILABLE" });
  });
});
