import { Prisma } from "@troupe/db";
import type { Db } from "../../../server/db";
import type { Role } from "../lib/roles";
import { decoyHash, generatePassword, hashPassword, verifyPassword } from "./password";
import { newSecret, sha256Hex, isSecretShaped } from "./secrets";
import { type AuthUser, createSession } from "./sessions";

/** How long an invitation link works. */
export const INVITE_DAYS = 7;

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export interface UserRecord {
  id: string;
  email: string;
  name: string;
  role: Role;
  /** "active" (has a password), "invited" (link not used yet) or "disabled". */
  state: "active" | "invited" | "disabled";
  inviteExpiresAt: Date | null;
  createdAt: Date;
}

const userSelect = { id: true, email: true, name: true, role: true, passwordHash: true, disabledAt: true, inviteExpiresAt: true, createdAt: true } as const;
type UserRow = Prisma.UserGetPayload<{ select: typeof userSelect }>;

function toRecord(row: UserRow): UserRecord {
  const state = row.disabledAt ? "disabled" : row.passwordHash ? "active" : "invited";
  return { id: row.id, email: row.email, name: row.name, role: row.role, state, inviteExpiresAt: row.inviteExpiresAt, createdAt: row.createdAt };
}

export async function listUsers(db: Db): Promise<UserRecord[]> {
  const rows = await db.user.findMany({ select: userSelect, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return rows.map(toRecord);
}

export type BootstrapResult =
  | { created: false }
  | { created: true; email: string; password: string | null /** null: it came from the environment */ };

/**
 * The first start creates the first administrator: from TROUPE_ADMIN_EMAIL / TROUPE_ADMIN_PASSWORD
 * when set, otherwise `admin@localhost` with a generated password that the caller prints once.
 * Nothing happens when any user exists. Safe when several web processes start at once: the insert
 * runs under a transaction-level advisory lock and re-checks first.
 */
export async function bootstrapFirstAdmin(db: Db, env: { email?: string; password?: string }): Promise<BootstrapResult> {
  if ((await db.user.count()) > 0) return { created: false };
  const email = normaliseEmail(env.email || "admin@localhost");
  const password = env.password || generatePassword();
  const passwordHash = await hashPassword(password);
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('troupe:first-admin'))`;
    if ((await tx.user.count()) > 0) return { created: false } as const;
    await tx.user.create({ data: { email, name: "Administrator", role: "admin", passwordHash } });
    return { created: true, email, password: env.password ? null : password } as const;
  });
}

/**
 * Sign in with email and password: a new session, or null. An unknown email, a user without a
 * password yet, and a disabled user all cost one scrypt and answer the same, so neither the timing
 * nor the answer tells which accounts exist.
 */
export async function signIn(db: Db, email: string, password: string): Promise<{ user: AuthUser; secret: string; expiresAt: Date } | null> {
  const row = await db.user.findUnique({ where: { email: normaliseEmail(email) }, select: userSelect });
  const ok = await verifyPassword(password, row?.passwordHash ?? (await decoyHash()));
  if (!row || !row.passwordHash || row.disabledAt || !ok) return null;
  const session = await createSession(db, row.id);
  return { user: { id: row.id, email: row.email, name: row.name, role: row.role }, ...session };
}

export class UserError extends Error {
  constructor(
    readonly field: string,
    message: string,
    readonly kind: "conflict" | "not_found" | "invalid" = "invalid",
  ) {
    super(message);
    this.name = "UserError";
  }
}

/** Invite a person: a user without a password and a link secret (shown once to the admin). */
export async function inviteUser(db: Db, input: { email: string; name: string; role: Role }): Promise<{ user: UserRecord; secret: string }> {
  const secret = newSecret();
  try {
    const row = await db.user.create({
      data: {
        email: normaliseEmail(input.email),
        name: input.name.trim(),
        role: input.role,
        inviteHash: sha256Hex(secret),
        inviteExpiresAt: new Date(Date.now() + INVITE_DAYS * 86_400_000),
      },
      select: userSelect,
    });
    return { user: toRecord(row), secret };
  } catch (error) {
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002") {
      throw new UserError("email", `a user with the email ${normaliseEmail(input.email)} already exists`, "conflict");
    }
    throw error;
  }
}

/** A fresh invitation link for a user who has not set a password yet (the old link stops working). */
export async function reinviteUser(db: Db, id: string): Promise<{ user: UserRecord; secret: string }> {
  const secret = newSecret();
  const updated = await db.user.updateMany({
    where: { id, passwordHash: null },
    data: { inviteHash: sha256Hex(secret), inviteExpiresAt: new Date(Date.now() + INVITE_DAYS * 86_400_000) },
  });
  if (updated.count === 0) throw new UserError("id", "no invited user with this id (an active user signs in with their password)", "not_found");
  const row = await db.user.findUniqueOrThrow({ where: { id }, select: userSelect });
  return { user: toRecord(row), secret };
}

/** The invited user of a link secret, if the link is still valid. */
export async function findInvite(db: Db, secret: string): Promise<{ email: string; name: string; role: Role } | null> {
  if (!isSecretShaped(secret)) return null;
  const row = await db.user.findUnique({ where: { inviteHash: sha256Hex(secret) }, select: userSelect });
  if (!row || row.passwordHash || row.disabledAt || !row.inviteExpiresAt || row.inviteExpiresAt.getTime() < Date.now()) return null;
  return { email: row.email, name: row.name, role: row.role };
}

/** Accept an invitation: set the password (the link is used up) and sign in. */
export async function acceptInvite(db: Db, secret: string, password: string): Promise<{ user: AuthUser; secret: string; expiresAt: Date } | null> {
  const invite = await findInvite(db, secret);
  if (!invite) return null;
  const passwordHash = await hashPassword(password);
  // Only the holder of a still-unused link sets it: the where clause makes two racing accepts set it once.
  const updated = await db.user.updateMany({
    where: { inviteHash: sha256Hex(secret), passwordHash: null },
    data: { passwordHash, inviteHash: null, inviteExpiresAt: null },
  });
  if (updated.count === 0) return null;
  const row = await db.user.findUniqueOrThrow({ where: { email: invite.email }, select: userSelect });
  const session = await createSession(db, row.id);
  return { user: { id: row.id, email: row.email, name: row.name, role: row.role }, ...session };
}

/** How many active administrators would remain: the last one may not be demoted or disabled. */
async function otherActiveAdmins(db: Db, exceptId: string): Promise<number> {
  return db.user.count({ where: { role: "admin", disabledAt: null, passwordHash: { not: null }, id: { not: exceptId } } });
}

export async function setUserRole(db: Db, id: string, role: Role): Promise<UserRecord> {
  const row = await db.user.findUnique({ where: { id }, select: userSelect });
  if (!row) throw new UserError("id", `user ${id} not found`, "not_found");
  if (row.role === "admin" && role !== "admin" && (await otherActiveAdmins(db, id)) === 0) {
    throw new UserError("role", "the last administrator keeps the admin role (make someone else admin first)", "conflict");
  }
  return toRecord(await db.user.update({ where: { id }, data: { role }, select: userSelect }));
}

/** Disable (sessions end at once, tokens stop working) or enable a user. */
export async function setUserDisabled(db: Db, id: string, disabled: boolean): Promise<UserRecord> {
  const row = await db.user.findUnique({ where: { id }, select: userSelect });
  if (!row) throw new UserError("id", `user ${id} not found`, "not_found");
  if (disabled && row.role === "admin" && (await otherActiveAdmins(db, id)) === 0) {
    throw new UserError("disabled", "the last administrator cannot be disabled", "conflict");
  }
  const updated = await db.user.update({ where: { id }, data: { disabledAt: disabled ? (row.disabledAt ?? new Date()) : null }, select: userSelect });
  if (disabled) await db.session.deleteMany({ where: { userId: id } });
  return toRecord(updated);
}
