import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authenticateToken, hashToken } from "../src/features/tokens/server/tokens";
import { openServices, type TestServices } from "./helpers/services";

/** The `token` tRPC router behind /settings/tokens, and token checks, against real Postgres. */

let services: TestServices;
const created: string[] = [];
/** A real editor: tokens belong to a user row. */
let editor: Awaited<ReturnType<TestServices["user"]>>;

beforeAll(async () => {
  services = openServices();
  editor = await services.user("editor", "token-owner");
});
afterAll(async () => {
  await services.db.apiToken.deleteMany({ where: { id: { in: created } } });
  await services.close();
});

describe("token router", () => {
  it("creates a token whose secret is returned once and stored only as a hash; lists and revokes it", async () => {
    const { token, record } = await editor.caller.token.create({ name: "  nightly eval  " });
    created.push(record.id);
    expect(token).toMatch(/^troupe_[A-Za-z0-9_-]{43}$/);
    expect(record).toMatchObject({ name: "nightly eval", lastUsedAt: null, revokedAt: null });
    expect(token.startsWith(record.prefix)).toBe(true);
    const row = await services.db.apiToken.findUniqueOrThrow({ where: { id: record.id } });
    expect(row.hash).toBe(hashToken(token));

    const { items } = await editor.caller.token.list();
    const listed = items.find((t) => t.id === record.id)!;
    expect(Object.keys(listed).sort()).toEqual(["createdAt", "id", "lastUsedAt", "name", "owner", "prefix", "revokedAt"]);
    expect(listed.owner).toEqual({ id: editor.id, email: editor.email });
    expect(JSON.stringify(items)).not.toContain(token);

    const authenticated = await authenticateToken(services.db, token);
    expect(authenticated?.record.id).toBe(record.id);
    expect(authenticated?.user).toEqual({ id: editor.id, email: editor.email, name: "token-owner", role: "editor" });
    const revoked = await editor.caller.token.revoke({ id: record.id });
    expect(revoked.revokedAt).toBeInstanceOf(Date);
    expect(await authenticateToken(services.db, token)).toBeNull();
    // Revoking again keeps the first time.
    expect((await editor.caller.token.revoke({ id: record.id })).revokedAt).toEqual(revoked.revokedAt);
  });

  it("rejects a blank or long name naming the field, and an unknown id with NOT_FOUND", async () => {
    for (const name of ["   ", "x".repeat(101)]) {
      const error = await editor.caller.token.create({ name }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TRPCError);
      expect((error as TRPCError).code).toBe("BAD_REQUEST");
      expect(JSON.stringify((error as TRPCError).cause)).toMatch(/name/);
    }
    const missing = await editor.caller.token.revoke({ id: "no-such-token" }).catch((e: unknown) => e);
    expect((missing as TRPCError).code).toBe("NOT_FOUND");
  });

  it("does not accept a token that differs in one character, or a malformed one", async () => {
    const { token, record } = await editor.caller.token.create({ name: "tamper" });
    created.push(record.id);
    const last = token.at(-1) === "A" ? "B" : "A";
    expect(await authenticateToken(services.db, token.slice(0, -1) + last)).toBeNull();
    expect(await authenticateToken(services.db, token + "x")).toBeNull();
    expect(await authenticateToken(services.db, "")).toBeNull();
  });
});
