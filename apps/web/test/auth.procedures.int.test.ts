import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as trpcGet, POST as trpcPost } from "../src/app/api/trpc/[trpc]/route";
import { ROLES, hasRole, type Role } from "../src/features/auth/lib/roles";
import { PROCEDURE_ROLES } from "../src/features/auth/server/procedureRules";
import { appRouter, createCaller } from "../src/server/api/root";
import type { TRPCContext } from "../src/server/api/trpc";
import { openServices, type TestServices } from "./helpers/services";
import { sessionCookieFor } from "./helpers/users";

/**
 * Who may call which tRPC procedure, over ALL of them: the list comes from the router itself, so a
 * procedure added without a rule in PROCEDURE_ROLES fails here by name. For each one: anonymous is
 * refused with UNAUTHORIZED and every role below its rule with FORBIDDEN, before anything is read
 * (the context's services throw if touched); its own role gets past the check. Then the same over
 * HTTP through the real route: 401 anonymous, 403 too low.
 */

type ProcedureType = "query" | "mutation" | "subscription";
const procedures = Object.entries((appRouter as unknown as { _def: { procedures: Record<string, { _def: { type: ProcedureType } }> } })._def.procedures).map(
  ([path, p]) => ({ path, type: p._def.type }),
);

/** Services that fail the test if a refused call touches them. */
function tripwire(name: string): never {
  return new Proxy(
    {},
    {
      get(_target, prop) {
        if (prop === "then") return undefined; // not a thenable
        throw new Error(`TOUCHED ${name}.${String(prop)}`);
      },
    },
  ) as never;
}

function contextAs(role: Role | null): TRPCContext {
  return {
    db: tripwire("db"),
    redis: tripwire("redis"),
    runQueue: tripwire("runQueue"),
    rewardTests: tripwire("rewardTests"),
    auth: role ? { user: { id: `u-${role}`, email: `${role}@troupe.test`, name: role, role }, via: "session" } : null,
  };
}

async function callPath(ctx: TRPCContext, path: string): Promise<unknown> {
  let target: unknown = createCaller(ctx);
  for (const part of path.split(".")) target = (target as Record<string, unknown>)[part];
  // Deliberately invalid input: a refusal must come before input is even parsed.
  return (target as (input: unknown) => Promise<unknown>)({ "not-a-field": "\u0000" });
}

async function outcome(ctx: TRPCContext, path: string): Promise<string> {
  try {
    await callPath(ctx, path);
    return "ok";
  } catch (error) {
    if (error instanceof TRPCError) return error.code;
    return `other: ${error instanceof Error ? error.message : String(error)}`;
  }
}

describe("every tRPC procedure has a rule", () => {
  it("the router and PROCEDURE_ROLES list the same paths (a new procedure needs a rule; a stale rule is removed)", () => {
    expect(procedures.length).toBeGreaterThan(40);
    const missing = procedures.map((p) => p.path).filter((p) => !(p in PROCEDURE_ROLES));
    const stale = Object.keys(PROCEDURE_ROLES).filter((p) => !procedures.some((q) => q.path === p));
    expect(missing, "procedures without a rule in features/auth/server/procedureRules.ts").toEqual([]);
    expect(stale, "rules for procedures that do not exist").toEqual([]);
  });

  it("users and runners need admin; what writes, launches or runs code needs editor", () => {
    for (const p of procedures) {
      const rule = PROCEDURE_ROLES[p.path]!;
      if (p.path.startsWith("user.")) expect(rule, p.path).toBe("admin");
      // Any mutation (writes) needs at least editor, except a user's own API tokens (their role travels with them).
      if (p.type === "mutation" && !p.path.startsWith("token.")) expect(hasRole(rule, "editor"), p.path).toBe(true);
    }
    expect(PROCEDURE_ROLES["reward.test"]).toBe("editor");
    expect(PROCEDURE_ROLES["experiment.launch"]).toBe("editor");
  });
});

describe.each(procedures)("$path ($type)", ({ path }) => {
  const rule = PROCEDURE_ROLES[path] ?? "admin";

  it("refuses anonymous callers with UNAUTHORIZED before reading anything", async () => {
    expect(await outcome(contextAs(null), path)).toBe("UNAUTHORIZED");
  });

  it.each(ROLES.filter((r) => !hasRole(r, rule)).map((role) => ({ role })))("refuses $role with FORBIDDEN before reading anything", async ({ role }) => {
    expect(await outcome(contextAs(role), path)).toBe("FORBIDDEN");
  });

  it.each(ROLES.filter((r) => hasRole(r, rule)).map((role) => ({ role })))("lets $role past the check", async ({ role }) => {
    // Past the check, the call fails on its bad input or on the tripwire services: never on who calls.
    const result = await outcome(contextAs(role), path);
    expect(["UNAUTHORIZED", "FORBIDDEN"]).not.toContain(result);
  });
});

describe("over HTTP (the real /api/trpc route)", () => {
  let services: TestServices;
  let viewerCookie: string;
  let editorCookie: string;
  beforeAll(async () => {
    services = openServices();
    viewerCookie = await sessionCookieFor(services.db, (await services.user("viewer", "http-viewer")).id);
    editorCookie = await sessionCookieFor(services.db, (await services.user("editor", "http-editor")).id);
  });
  afterAll(async () => {
    await services.close();
  });

  async function request(path: string, type: ProcedureType, cookie?: string): Promise<Response> {
    const headers: Record<string, string> = cookie ? { cookie } : {};
    const params = { params: Promise.resolve({ trpc: path }) };
    if (type === "query") {
      const url = `http://127.0.0.1/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify({ json: {} }))}`;
      return (trpcGet as (r: Request, c: unknown) => Promise<Response>)(new Request(url, { headers }), params);
    }
    return (trpcPost as (r: Request, c: unknown) => Promise<Response>)(
      new Request(`http://127.0.0.1/api/trpc/${path}`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ json: {} }) }),
      params,
    );
  }

  it("answers 401 to an anonymous caller (and to a forged or signed-out cookie) on every procedure", async () => {
    for (const { path, type } of procedures) {
      for (const cookie of [undefined, `troupe_session=${"A".repeat(43)}`, "troupe_session=junk"]) {
        const r = await request(path, type, cookie);
        expect(r.status, `${path} ${cookie ?? "no cookie"}`).toBe(401);
      }
    }
  });

  it("answers 401 to a batch of anonymous calls, and 403 to a viewer on every editor or admin procedure", async () => {
    const batch = await (trpcGet as (r: Request, c: unknown) => Promise<Response>)(
      new Request(`http://127.0.0.1/api/trpc/run.list,dataset.list?batch=1&input=${encodeURIComponent("{}")}`),
      { params: Promise.resolve({ trpc: "run.list,dataset.list" }) },
    );
    expect(batch.status).toBe(401);
    for (const { path, type } of procedures) {
      const rule = PROCEDURE_ROLES[path]!;
      const asViewer = await request(path, type, viewerCookie);
      if (rule === "viewer") expect([401, 403], path).not.toContain(asViewer.status);
      else expect(asViewer.status, path).toBe(403);
      if (rule === "admin") expect((await request(path, type, editorCookie)).status, path).toBe(403);
    }
  });
});
