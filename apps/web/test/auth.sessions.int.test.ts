import { createDb, type Db } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyMigrations } from "../../../packages/db/scripts/schema-engine";
import { ThrowawayDatabases } from "../../../packages/db/test/throwawayDatabases";
import { ensureFirstAdmin } from "../src/features/auth/server/bootstrap";
import { hashPassword, verifyPassword } from "../src/features/auth/server/password";
import { sha256Hex } from "../src/features/auth/server/secrets";
import { inviteUser, setUserRole } from "../src/features/auth/server/users";
import { openServices, type TestServices } from "./helpers/services";
import { sessionCookieFor, tokenFor } from "./helpers/users";
import { startWebServer, type WebServer } from "./helpers/webServer";
import { startApiServer, type ApiServer } from "./helpers/apiServer";

/**
 * Signing in, out and accepting invitations over real HTTP (the route modules Next serves), the
 * session cookie's flags, and what ends a session or a token's power: sign-out, disabling the user,
 * a changed role. Passwords are scrypt hashes; sessions and invitations are stored as sha256 only.
 */

let services: TestServices;
let web: WebServer;
let api: ApiServer;
const password = "correct horse battery";

beforeAll(async () => {
  services = openServices();
  web = await startWebServer();
  api = await startApiServer({ isolateQueue: true });
});
afterAll(async () => {
  await web?.close();
  await api?.close();
  await services?.close();
});

async function userWithPassword(role: "viewer" | "editor" | "admin", label: string) {
  const user = await services.user(role, label);
  await services.db.user.update({ where: { id: user.id }, data: { passwordHash: await hashPassword(password) } });
  return user;
}

function signIn(body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${web.baseUrl}/api/auth/sign-in`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body), redirect: "manual" });
}

const cookieOf = (response: Response) => response.headers.getSetCookie().find((c) => c.startsWith("troupe_session="))!;
const cookiePair = (setCookie: string) => setCookie.split(";")[0]!;

describe("passwords", () => {
  it("are scrypt hashes with a salt each, verified in constant time; a malformed hash never matches", async () => {
    const a = await hashPassword("same password");
    const b = await hashPassword("same password");
    expect(a).toMatch(/^scrypt\$32768\$8\$3\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword("same password", a)).toBe(true);
    expect(await verifyPassword("same passworD", a)).toBe(false);
    expect(await verifyPassword("same password", "scrypt$1$1$1$x$y")).toBe(false);
    expect(await verifyPassword("same password", "md5$abc")).toBe(false);
  });
});

describe("sign-in and sessions over HTTP", () => {
  it("signs in with the right password only: httpOnly, SameSite=Lax cookie (Secure behind https); the database holds only its sha256", async () => {
    const user = await userWithPassword("editor", "signin");
    expect((await signIn({ email: user.email, password: "wrong password!" })).status).toBe(401);
    expect((await signIn({ email: "nobody@troupe.test", password })).status).toBe(401);
    expect((await signIn({ email: user.email })).status).toBe(400);

    const ok = await signIn({ email: user.email.toUpperCase(), password });
    expect(ok.status).toBe(200);
    const cookie = cookieOf(ok);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/);
    const secret = cookiePair(cookie).split("=")[1]!;
    expect(await services.db.session.count({ where: { id: sha256Hex(secret), userId: user.id } })).toBe(1);
    expect(await services.db.session.count({ where: { id: secret } })).toBe(0);

    const me = await web.trpc("auth.me", "query", undefined, cookiePair(cookie));
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ result: { user: { id: user.id, role: "editor" }, via: "session" } });

    const secure = await signIn({ email: user.email, password }, { "x-forwarded-proto": "https" });
    expect(cookieOf(secure)).toMatch(/; Secure/);
  });

  it("a form post redirects to a same-site `next` only (no open redirect), or back to sign-in with an error", async () => {
    const user = await userWithPassword("viewer", "form");
    const form = (fields: Record<string, string>) =>
      fetch(`${web.baseUrl}/api/auth/sign-in`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields), redirect: "manual" });
    const good = await form({ email: user.email, password, next: "/runs?status=running" });
    expect(good.status).toBe(303);
    expect(good.headers.get("location")).toBe("/runs?status=running");
    for (const next of ["//evil.example/x", "https://evil.example/", "/\\evil.example"]) {
      expect((await form({ email: user.email, password, next })).headers.get("location")).toBe("/");
    }
    const bad = await form({ email: user.email, password: "nope nope nope", next: "/runs" });
    expect(bad.headers.get("location")).toBe("/sign-in?error=credentials&next=%2Fruns");
  });

  it("sign-out ends the session on the server, not just in the browser", async () => {
    const user = await userWithPassword("viewer", "signout");
    const cookie = cookiePair(cookieOf(await signIn({ email: user.email, password })));
    expect((await web.trpc("auth.me", "query", undefined, cookie)).status).toBe(200);
    const out = await fetch(`${web.baseUrl}/api/auth/sign-out`, { method: "POST", headers: { cookie, "content-type": "application/json" }, body: "{}" });
    expect(cookieOf(out)).toMatch(/Max-Age=0/);
    expect((await web.trpc("auth.me", "query", undefined, cookie)).status).toBe(401);
  });

  it("an expired session is refused", async () => {
    const user = await services.user("viewer", "expired");
    const cookie = await sessionCookieFor(services.db, user.id);
    await services.db.session.updateMany({ where: { userId: user.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await web.trpc("auth.me", "query", undefined, cookie)).status).toBe(401);
  });
});

describe("invitations", () => {
  it("an invited user sets a password through the link once, is signed in with the invited role, and the link is used up", async () => {
    const { user, secret } = await inviteUser(services.db, { email: `invitee-${Date.now()}@troupe.test`, name: "Invitee", role: "viewer" });
    expect(user.state).toBe("invited");
    const stored = await services.db.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(stored.inviteHash).toBe(sha256Hex(secret));
    try {
      const accept = (body: unknown) => fetch(`${web.baseUrl}/api/auth/accept-invite`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      expect((await accept({ secret, password: "short" })).status).toBe(400);
      const ok = await accept({ secret, password: "a good long password" });
      expect(ok.status).toBe(200);
      const me = await web.trpc("auth.me", "query", undefined, cookiePair(cookieOf(ok)));
      expect(me.body).toMatchObject({ result: { user: { email: user.email, role: "viewer" } } });
      expect((await accept({ secret, password: "another long password" })).status).toBe(400);
      expect((await signIn({ email: user.email, password: "a good long password" })).status).toBe(200);
    } finally {
      await services.db.user.delete({ where: { id: user.id } });
    }
  });
});

describe("what ends a session's or a token's power", () => {
  it("disabling a user ends their sessions and their tokens at once; a lowered role applies on the next request", async () => {
    const admin = await services.user("admin", "admin-actor");
    const editor = await userWithPassword("editor", "to-disable");
    const cookie = cookiePair(cookieOf(await signIn({ email: editor.email, password })));
    const { token } = await tokenFor(services.db, editor.id);
    const restGet = () => fetch(`${api.baseUrl}/api/v1/runs?limit=1`, { headers: { authorization: `Bearer ${token}` } });
    const restLaunch = () => fetch(`${api.baseUrl}/api/v1/runs`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: "{}" });
    expect((await restGet()).status).toBe(200);
    expect((await restLaunch()).status).toBe(400); // past the role check, refused for its empty spec

    await setUserRole(services.db, editor.id, "viewer");
    const refused = await restLaunch();
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(/needs the editor role/);
    expect((await restGet()).status).toBe(200);
    expect((await web.trpc("experiment.launch", "mutation", { experimentId: "x" }, cookie)).status).toBe(403);

    await admin.caller.user.setDisabled({ id: editor.id, disabled: true });
    expect((await web.trpc("auth.me", "query", undefined, cookie)).status).toBe(401);
    expect((await restGet()).status).toBe(401);
    expect((await signIn({ email: editor.email, password })).status).toBe(401);
  });

  it("the last administrator can be neither demoted nor disabled, and nobody disables themselves", async () => {
    const databases = new ThrowawayDatabases();
    const url = databases.url("lastadmin");
    await applyMigrations(url);
    const db: Db = createDb(url);
    try {
      const only = await db.user.create({ data: { email: "only@troupe.test", role: "admin", passwordHash: await hashPassword(password) } });
      await expect(setUserRole(db, only.id, "editor")).rejects.toThrow(/last administrator/);
      const { setUserDisabled } = await import("../src/features/auth/server/users");
      await expect(setUserDisabled(db, only.id, true)).rejects.toThrow(/last administrator/);
    } finally {
      await db.$disconnect();
      await databases.dropAll();
    }
    const admin = await services.user("admin", "self");
    await expect(admin.caller.user.setDisabled({ id: admin.id, disabled: true })).rejects.toThrow(/yourself/);
  });
});

describe("the first administrator", () => {
  it("is created once on an empty database, from the environment or with a password printed once; never again", async () => {
    const databases = new ThrowawayDatabases();
    const url = databases.url("bootstrap");
    await applyMigrations(url);
    const db: Db = createDb(url);
    try {
      const lines: string[] = [];
      const log = (line: string) => lines.push(line);
      // Several web processes starting at once: one administrator, one announcement.
      ensureFirstAdmin(db, {}, log);
      ensureFirstAdmin(db, {}, log);
      for (let i = 0; i < 100 && lines.length < 3; i++) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 500));
      expect(await db.user.count()).toBe(1);
      expect(lines.filter((l) => l.includes("First administrator created: admin@localhost"))).toHaveLength(1);
      const printed = /password: (\S+)/.exec(lines.join("\n"))?.[1];
      expect(printed).toMatch(/^[A-Za-z0-9_-]{24}$/);
      const admin = await db.user.findFirstOrThrow();
      expect(admin.role).toBe("admin");
      expect(await verifyPassword(printed!, admin.passwordHash!)).toBe(true);

      ensureFirstAdmin(db, { email: "other@troupe.test", password: "another password" }, log);
      await new Promise((r) => setTimeout(r, 1000));
      expect(await db.user.count()).toBe(1);
    } finally {
      await db.$disconnect();
      await databases.dropAll();
    }
  });
});
