import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appRouter } from "../src/server/api/root";
import { openServices, type TestServices } from "./helpers/services";
import { sessionCookieFor, tokenFor } from "./helpers/users";
import { startApiServer, type ApiServer } from "./helpers/apiServer";
import { startWebServer, type WebServer } from "./helpers/webServer";

/**
 * Fuzzing the REST API and every tRPC procedure with hostile inputs: bounded (a fixed number of
 * cases, each with a timeout), loopback only (in-process servers on 127.0.0.1), and reproducible (a
 * fixed seed; a failure names its case number and input). Inputs mix plausible field names with NUL,
 * lone surrogates, prototype-named keys, huge and odd numbers, deep nesting, wrong types, malformed
 * bodies and superjson payloads claiming NaN/Infinity/BigInt. The property: no answer is a 5xx.
 * Whatever the fuzz created is removed afterwards.
 */

const SEED = 0x7f0c3a91;
const TRPC_CASES = 240;
const REST_CASES = 160;

/** mulberry32: small, fast, and the same sequence on every machine. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  return { next, int, pick };
}

const STRINGS = ["", "a", "demo-echo-letter", "a\u0000b", "\u0000", "x\ud800y", "\udfff", "constructor", "__proto__", "prototype", "toString", "😀🎭", "../../etc/passwd", "' OR 1=1 --", "<script>alert(1)</script>", "%00", "a".repeat(5000), " ", "\n\t", "viewer", "admin", "jsonl", "yaml", "csv", "huggingface", "local", "actor", "reward", "step", "time"];
const NUMBERS = [0, -1, 1, 2, 1.5, -0, 1e308, -1e308, 2 ** 53, 2 ** 31, -(2 ** 31) - 1, 1e-320, 100, 1000000];
const KEYS = ["runId", "id", "ids", "name", "names", "spec", "limit", "cursor", "experimentId", "search", "format", "text", "kind", "content", "contentBase64", "email", "role", "disabled", "step", "steps", "maxMarkers", "buckets", "from", "to", "actor", "status", "tags", "priority", "gpus", "command", "datasetId", "description", "evalFraction", "code", "args", "constructor", "__proto__", "prototype", "a\u0000"];

function value(r: ReturnType<typeof prng>, depth = 0): unknown {
  switch (r.int(depth > 2 ? 4 : 7)) {
    case 0:
      return r.pick(STRINGS);
    case 1:
      return r.pick(NUMBERS);
    case 2:
      return r.pick([true, false, null]);
    case 3:
      return r.pick(STRINGS) + r.pick(STRINGS);
    case 4:
    case 5:
      return Object.fromEntries(Array.from({ length: r.int(5) }, () => [r.pick(KEYS), value(r, depth + 1)]));
    default:
      return Array.from({ length: r.int(4) }, () => value(r, depth + 1));
  }
}

/** A tRPC request body/query as the client would send it, or deliberately broken. */
function trpcPayload(r: ReturnType<typeof prng>): string {
  switch (r.int(8)) {
    case 0:
      return "{not json";
    case 1:
      return JSON.stringify({ json: value(r), meta: { values: { "": [r.pick(["number", "bigint", "Date", "undefined", "regexp", "set", "map"])] } } });
    case 2:
      return JSON.stringify({ json: { runId: "x", limit: "NaN" }, meta: { values: { limit: ["number"] } } });
    case 3:
      return JSON.stringify(value(r));
    default:
      return JSON.stringify({ json: Object.fromEntries(Array.from({ length: 1 + r.int(4) }, () => [r.pick(KEYS), value(r, 1)])) });
  }
}

/** encodeURIComponent, except that a lone surrogate becomes the invalid UTF-8 `%ED%A0%80` (fuzz input, not a client crash). */
const enc = (text: string) => text.split(/(\p{Cs})/u).map((part, k) => (k % 2 ? "%ED%A0%80" : encodeURIComponent(part))).join("");

const procedures = Object.entries((appRouter as unknown as { _def: { procedures: Record<string, { _def: { type: string } }> } })._def.procedures)
  // reward.test waits for a runner's answer; with no runner listening a valid call would only time out.
  .filter(([path]) => path !== "reward.test")
  .map(([path, p]) => ({ path, type: p._def.type }));

let services: TestServices;
let web: WebServer;
let api: ApiServer;
let cookie: string;
let token: string;
let startedAt: Date;

beforeAll(async () => {
  startedAt = new Date(Date.now() - 1000);
  services = openServices();
  web = await startWebServer();
  api = await startApiServer({ isolateQueue: true });
  const admin = await services.user("admin", "fuzz");
  cookie = await sessionCookieFor(services.db, admin.id);
  token = (await tokenFor(services.db, admin.id)).token;
});

afterAll(async () => {
  // Whatever the fuzz managed to create (this file runs alone: vitest runs files one at a time).
  const since = { createdAt: { gte: startedAt } };
  const runs = await services.db.run.findMany({ where: since, select: { id: true } });
  services.runIds.push(...runs.map((r) => r.id));
  await services.db.designPart.deleteMany({ where: since });
  await services.db.dataset.deleteMany({ where: since });
  await services.db.experiment.deleteMany({ where: { ...since, isDemo: false } });
  await services.db.user.deleteMany({ where: { ...since, email: { not: { endsWith: "@troupe.test" } } } });
  await web?.close();
  await api?.close();
  await services?.close();
}, 60_000);

async function send(url: string, init: RequestInit): Promise<number> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(20_000), redirect: "manual" });
  await response.arrayBuffer();
  return response.status;
}

describe(`fuzz (seed ${SEED.toString(16)})`, () => {
  it(`tRPC: ${TRPC_CASES} hostile calls across every procedure, none answered with a 5xx`, async () => {
    const r = prng(SEED);
    const failures: string[] = [];
    const seen = new Map<number, number>();
    for (let i = 0; i < TRPC_CASES; i++) {
      const { path, type } = r.pick(procedures);
      const payload = trpcPayload(r);
      const asGet = type === "query" ? r.next() < 0.85 : r.next() < 0.1;
      const status = asGet
        ? await send(`${web.baseUrl}/api/trpc/${path}?input=${enc(payload)}`, { headers: { cookie } })
        : await send(`${web.baseUrl}/api/trpc/${path}`, { method: "POST", headers: { cookie, "content-type": r.pick(["application/json", "text/plain", "application/x-www-form-urlencoded"]) }, body: payload });
      if (status >= 500) failures.push(`case ${i}: ${asGet ? "GET" : "POST"} ${path} ${payload.slice(0, 300)} -> ${status}`);
      seen.set(status, (seen.get(status) ?? 0) + 1);
    }
    expect(failures).toEqual([]);
    // It reached the procedures (some calls succeed) and their checks (most are refused as bad input).
    expect(seen.get(200) ?? 0, JSON.stringify([...seen])).toBeGreaterThan(0);
    expect(seen.get(400) ?? 0, JSON.stringify([...seen])).toBeGreaterThan(TRPC_CASES / 4);
  }, 300_000);

  it(`REST: ${REST_CASES} hostile requests across every endpoint, none answered with a 5xx`, async () => {
    const r = prng(SEED ^ 0x5bd1e995);
    const auth = { authorization: `Bearer ${token}` };
    const seen = new Map<number, number>();
    const id = () => enc(r.pick(["x", "demo-echo-letter", "a\u0000b", "..", "constructor", "%00", "a".repeat(300)]));
    const query = () =>
      Array.from({ length: r.int(4) }, () => `${enc(r.pick(KEYS))}=${enc(String(r.pick([...STRINGS.slice(0, 12), ...NUMBERS.map(String)])))}`).join("&");
    const body = (): { body: string; type: string } => {
      switch (r.int(6)) {
        case 0:
          return { body: "specVersion: 1\nname: &a [*a]\n", type: "application/yaml" };
        case 1:
          return { body: `a: &a [x,x,x,x,x,x,x,x,x,x]\n${Array.from({ length: 8 }, (_, k) => `b${k}: &b${k} [${Array(10).fill(k === 0 ? "*a" : `*b${k - 1}`).join(",")}]`).join("\n")}\n`, type: "application/yaml" };
        case 2:
          return { body: JSON.stringify({ specVersion: 1, name: r.pick(STRINGS), actors: value(r), trainer: value(r) }), type: "application/json" };
        case 3:
          return { body: JSON.stringify({ spec: value(r), priority: r.pick(NUMBERS), tags: value(r) }), type: r.pick(["application/json", "text/plain", "application/yaml"]) };
        case 4:
          return { body: Array.from({ length: 1 + r.int(3) }, () => JSON.stringify(value(r))).join("\n"), type: "application/x-ndjson" };
        default:
          return { body: String(value(r)), type: r.pick(["application/json", "application/yaml", "text/csv"]) };
      }
    };
    const failures: string[] = [];
    for (let i = 0; i < REST_CASES; i++) {
      const kind = r.int(8);
      let method = "GET";
      let path: string;
      let init: RequestInit = { headers: auth };
      if (kind === 0) path = `/runs?${query()}`;
      else if (kind === 1) path = `/runs/${id()}`;
      else if (kind === 2) path = `/runs/${id()}/wait?timeout=${r.pick(["0", "1", "-1", "x", "99999", "1e3"])}`;
      else if (kind === 3) path = `/runs/${id()}/${r.pick(["metrics", "episodes"])}?${query()}`;
      else if (kind === 4) {
        method = "POST";
        path = `/runs/${id()}/${r.pick(["cancel", "pause", "resume", "stop"])}`;
      } else if (kind === 5) {
        method = "POST";
        const b = body();
        path = `/datasets?name=${enc(r.pick(["fuzz_ds", "a\u0000", "", "constructor", "x".repeat(200)]))}&format=${r.pick(["jsonl", "csv", "parquet", "xml", ""])}`;
        init = { headers: { ...auth, "content-type": b.type }, body: b.body };
      } else {
        method = "POST";
        path = "/runs";
        const b = body();
        init = { headers: { ...auth, "content-type": b.type, ...(r.next() < 0.3 ? { "idempotency-key": r.pick(["k", "a b", "x".repeat(300), "fuzz-key", "ünï"]) } : {}) }, body: b.body };
      }
      const status = await send(`${api.baseUrl}/api/v1${path}`, { ...init, method });
      if (status >= 500) failures.push(`case ${i}: ${method} ${path.slice(0, 200)} ${String(init.body ?? "").slice(0, 200)} -> ${status}`);
      seen.set(status, (seen.get(status) ?? 0) + 1);
    }
    expect(failures).toEqual([]);
    expect(seen.get(400) ?? 0, JSON.stringify([...seen])).toBeGreaterThan(0);
    expect(seen.get(404) ?? 0, JSON.stringify([...seen])).toBeGreaterThan(0);
  }, 300_000);

  it("the outside probe's 500s (issue 30 #7) each answer 4xx", async () => {
    const auth = { authorization: `Bearer ${token}` };
    const cases: { what: string; url: string; init?: RequestInit; expected: number }[] = [];
    // A malformed percent-escape in any dynamic segment, with or without a caller: 400 before auth.
    for (const segment of ["%zz", "%", "%E0%A4%A", "%ED%A0%80", "a%2"]) {
      for (const path of [`/runs/${segment}`, `/runs/${segment}/episodes`, `/runs/${segment}/metrics`, `/runs/${segment}/wait`]) {
        cases.push({ what: `REST GET ${path}`, url: `${api.baseUrl}/api/v1${path}`, expected: 400 });
        cases.push({ what: `REST GET ${path} (token)`, url: `${api.baseUrl}/api/v1${path}`, init: { headers: auth }, expected: 400 });
      }
      cases.push({ what: `REST POST /runs/${segment}/cancel`, url: `${api.baseUrl}/api/v1/runs/${segment}/cancel`, init: { method: "POST", headers: auth }, expected: 400 });
      cases.push({ what: `SSE /api/runs/${segment}/events`, url: `${web.baseUrl}/api/runs/${segment}/events`, init: { headers: { cookie } }, expected: 400 });
      cases.push({ what: `tRPC /api/trpc/${segment}`, url: `${web.baseUrl}/api/trpc/${segment}`, init: { headers: { cookie } }, expected: 400 });
    }
    // A NUL in the sign-in email (JSON and form).
    cases.push({ what: "sign-in, NUL in the email (JSON)", url: `${web.baseUrl}/api/auth/sign-in`, init: { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "a\u0000@b.c", password: "whatever12" }) }, expected: 400 });
    cases.push({ what: "sign-in, NUL in the email (form: back to the form, not a 500)", url: `${web.baseUrl}/api/auth/sign-in`, init: { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "email=a%00%40b.c&password=whatever12" }, expected: 303 });
    // Steps and cursors beyond a Postgres int.
    const run = await services.db.run.create({ data: { name: "fuzz probe run", spec: {}, specVersion: 1, seed: 0, status: "running" }, select: { id: true } });
    services.runIds.push(run.id);
    for (const query of ["step=99999999999", "step=2147483648", "cursor=9999999999", "cursor=2147483648"]) {
      cases.push({ what: `episodes?${query}`, url: `${api.baseUrl}/api/v1/runs/${run.id}/episodes?${query}`, init: { headers: auth }, expected: 400 });
    }
    // A 200 KB tRPC URL: 414, not a dropped connection.
    cases.push({ what: "200 KB tRPC URL", url: `${web.baseUrl}/api/trpc/run.list?input=${"a".repeat(200_000)}`, init: { headers: { cookie } }, expected: 414 });
    cases.push({ what: "200 KB REST URL", url: `${api.baseUrl}/api/v1/runs?status=${"a".repeat(200_000)}`, init: { headers: auth }, expected: 414 });

    const wrong: string[] = [];
    for (const c of cases) {
      let status: number | string;
      try {
        status = await send(c.url, c.init ?? {});
      } catch (error) {
        status = `no answer (${(error as { cause?: { code?: string } }).cause?.code ?? String(error)})`;
      }
      if (status !== c.expected) wrong.push(`${c.what}: ${status}, expected ${c.expected}`);
    }
    expect(wrong).toEqual([]);
  }, 120_000);
});
