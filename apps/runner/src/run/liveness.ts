import type { RunnerContext } from "../context";

/**
 * A second sign of life for a supervised run, kept in Redis next to the heartbeat in Postgres: a key
 * per run that the supervising runner sets at every beat with a TTL of TROUPE_STALL_TIMEOUT_MS. When
 * Postgres is away the heartbeat write fails but this one does not, so once Postgres is back no
 * runner takes a live run for an abandoned one. A dead runner's keys expire by themselves.
 */
export const runAliveKey = (runId: string) => `troupe:run-alive:${runId}`;

export async function markRunAlive(ctx: Pick<RunnerContext, "redis" | "env">, runId: string): Promise<void> {
  await ctx.redis.set(runAliveKey(runId), ctx.env.runnerId, "PX", ctx.env.stallTimeoutMs);
}

export async function clearRunAlive(ctx: Pick<RunnerContext, "redis">, runId: string): Promise<void> {
  await ctx.redis.del(runAliveKey(runId));
}

/** Whether some runner marked the run alive within the stall timeout. Unknown (Redis away) counts as alive: never fail a run on a guess. */
export async function runLooksAlive(ctx: Pick<RunnerContext, "redis" | "log">, runId: string): Promise<boolean> {
  try {
    return (await ctx.redis.exists(runAliveKey(runId))) === 1;
  } catch (error) {
    ctx.log.warn(`run=${runId} could not read its liveness key (${(error as Error).message}); not treating it as abandoned now`);
    return true;
  }
}

/**
 * How long Postgres has been up, in ms (its own clock). No heartbeat could be written while it was
 * down, so a run whose heartbeat went stale across a restart proves nothing until it has been up for
 * a whole stall timeout.
 */
export async function databaseUptimeMs(ctx: Pick<RunnerContext, "db">): Promise<number> {
  const rows = await ctx.db.$queryRaw<{ ms: number }[]>`SELECT (extract(epoch FROM now() - pg_postmaster_start_time()) * 1000)::float8 AS ms`;
  return Number(rows[0]?.ms ?? 0);
}
