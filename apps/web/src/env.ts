import { z } from "zod";
import { ABUSE_LIMITS } from "./server/abuseLimits";

/**
 * Environment, validated with zod (create-t3-app style, server/client split).
 *
 * Read lazily: `next build` imports route modules without a database, so nothing here runs
 * at import time. `src/instrumentation.ts` calls `serverEnv()` when the server starts, so a
 * wrong or missing variable stops the process with a message naming it.
 */

const postgresUrl = z
  .string({ error: "is required (e.g. postgresql://user@127.0.0.1:5432/troupe)" })
  .min(1, "is required (e.g. postgresql://user@127.0.0.1:5432/troupe)")
  .refine((v) => /^postgres(ql)?:\/\//.test(v), "must be a postgresql:// URL");

const redisUrl = z
  .string({ error: "is required (e.g. redis://127.0.0.1:6379)" })
  .min(1, "is required (e.g. redis://127.0.0.1:6379)")
  .refine((v) => /^rediss?:\/\//.test(v), "must be a redis:// or rediss:// URL");

export const ServerEnv = z.object({
  DATABASE_URL: postgresUrl,
  REDIS_URL: redisUrl,
  PORT: z.coerce.number().int().min(1).max(65535).default(3000),
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  /** The first administrator, created on the first start when no user exists (else generated and printed once). */
  TROUPE_ADMIN_EMAIL: z.string().trim().email("must be an email address").optional().or(z.literal("").transform(() => undefined)),
  TROUPE_ADMIN_PASSWORD: z.string().min(10, "must be at least 10 characters").max(256).optional().or(z.literal("").transform(() => undefined)),
  /**
   * Host names (with or without port) this server answers to, comma-separated, besides loopback
   * (localhost, 127.0.0.1, [::1]). A request with any other Host is refused: a DNS-rebinding page
   * cannot reach the app through the victim's browser. `*` turns the check off.
   */
  TROUPE_ALLOWED_HOSTS: z.string().default(""),
  ...ABUSE_LIMITS.shape,
});
export type ServerEnv = z.infer<typeof ServerEnv>;

/** Variables the browser may see; they must be prefixed NEXT_PUBLIC_ (none are needed yet). */
export const ClientEnv = z.object({});
export type ClientEnv = z.infer<typeof ClientEnv>;

export class EnvError extends Error {
  constructor(readonly problems: { variable: string; message: string }[]) {
    super(`Invalid environment: ${problems.map((p) => `${p.variable} ${p.message}`).join("; ")}`);
    this.name = "EnvError";
  }
}

export function parseServerEnv(source: Record<string, string | undefined>): ServerEnv {
  const result = ServerEnv.safeParse(source);
  if (!result.success) {
    throw new EnvError(
      result.error.issues.map((i) => ({ variable: String(i.path[0] ?? "(env)"), message: i.message })),
    );
  }
  return result.data;
}

let cached: ServerEnv | undefined;

/** The validated server environment (parsed once per process). Never import this from client code. */
export function serverEnv(): ServerEnv {
  if (typeof window !== "undefined") throw new Error("serverEnv() was called in the browser");
  cached ??= parseServerEnv(process.env);
  return cached;
}
