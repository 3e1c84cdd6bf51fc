import type { Db } from "@troupe/db";
import type { Redis } from "ioredis";

export interface HealthReport {
  status: "ok" | "degraded";
  checks: { postgres: CheckResult; redis: CheckResult };
}
export interface CheckResult {
  ok: boolean;
  latencyMs: number;
  error?: string;
}

async function timed(check: () => Promise<unknown>, timeoutMs: number): Promise<CheckResult> {
  const started = performance.now();
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)),
    ]);
    return { ok: true, latencyMs: Math.round(performance.now() - started) };
  } catch (e) {
    // Only the message: no stack traces or connection strings leave the server.
    return { ok: false, latencyMs: Math.round(performance.now() - started), error: e instanceof Error ? e.message.split("\n")[0] : "failed" };
  }
}

/** Whether the web can reach what it depends on; used by start scripts, load balancers and CI. */
export async function checkHealth(db: Db, redis: Redis, timeoutMs = 3000): Promise<HealthReport> {
  const [postgres, redisCheck] = await Promise.all([
    timed(() => db.$queryRaw`select 1`, timeoutMs),
    timed(() => redis.ping(), timeoutMs),
  ]);
  return { status: postgres.ok && redisCheck.ok ? "ok" : "degraded", checks: { postgres, redis: redisCheck } };
}
