import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from "node:crypto";
import { serverEnv } from "../../../env";
import { HashBusyError, HashGate } from "./hashGate";

/**
 * Password hashing with Node's built-in scrypt (memory-hard; OpenSSL's implementation, no native
 * add-on to build, nothing downloaded). Parameters follow OWASP's password storage cheat sheet
 * (N=2^15, r=8, p=3: 32 MiB per hash) and are stored with each hash, so they can be raised later
 * without invalidating existing passwords.
 *
 * Format: `scrypt$<N>$<r>$<p>$<salt base64url>$<hash base64url>`.
 */

const PARAMS = { N: 2 ** 15, r: 8, p: 3 } as const;
const KEY_LENGTH = 32;
const SALT_BYTES = 16;
/** Longer passwords are refused before hashing, so a megabyte "password" cannot be used to burn CPU. */
export const PASSWORD_MAX_LENGTH = 256;
export const PASSWORD_MIN_LENGTH = 10;

let gate: HashGate | undefined;

/** The process's one gate on concurrent hashes (TROUPE_PASSWORD_HASH_CONCURRENCY, TROUPE_PASSWORD_HASH_QUEUE). */
export function hashGate(): HashGate {
  gate ??= new HashGate(serverEnv().TROUPE_PASSWORD_HASH_CONCURRENCY, serverEnv().TROUPE_PASSWORD_HASH_QUEUE);
  return gate;
}

function scrypt(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  // maxmem must exceed 128 * N * r bytes (Node's default, 32 MiB, is exactly that for our N and r).
  const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r };
  return hashGate().run(
    () =>
      new Promise<Buffer>((resolve, reject) =>
        scryptCallback(password.normalize("NFKC"), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key))),
      ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await scrypt(password, salt, PARAMS);
  return ["scrypt", PARAMS.N, PARAMS.r, PARAMS.p, salt.toString("base64url"), key.toString("base64url")].join("$");
}

/** True when `password` matches `stored`. A malformed stored hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const powerOfTwo = Number.isSafeInteger(N) && N >= 2 && (N & (N - 1)) === 0;
  if (!powerOfTwo || ![r, p].every((n) => Number.isSafeInteger(n) && n > 0) || N > 2 ** 20 || r > 32 || p > 16) return false;
  const expected = Buffer.from(parts[5]!, "base64url");
  if (expected.length !== KEY_LENGTH) return false;
  let key: Buffer;
  try {
    key = await scrypt(password, Buffer.from(parts[4]!, "base64url"), { N, r, p });
  } catch (error) {
    if (error instanceof HashBusyError) throw error; // "busy", not "wrong password"
    return false; // parameters OpenSSL refuses: no password matches them
  }
  return timingSafeEqual(expected, key);
}

/**
 * A hash of no one's password, computed once: signing in with an unknown email still costs one
 * scrypt, so the answer's timing does not tell which emails have accounts.
 */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  // A failed attempt (the hash gate was full) is not kept: the next sign-in computes it again.
  decoy ??= hashPassword(randomBytes(18).toString("base64url")).catch((error: unknown) => {
    decoy = undefined;
    throw error;
  });
  return decoy;
}

/** A password problem a person can act on, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`;
  return null;
}

/** A password for the first administrator when none is configured: 18 random bytes, 24 characters. */
export function generatePassword(): string {
  return randomBytes(18).toString("base64url");
}
