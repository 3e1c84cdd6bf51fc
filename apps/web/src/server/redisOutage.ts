import type { Redis } from "ioredis";

/**
 * One clear line per Redis outage in the web log, instead of ioredis's "[ioredis] Unhandled error
 * event" stack for every connection on every reconnect attempt: the first error of any of this
 * process's connections says Redis is unreachable (and that requests needing it answer 503), the
 * next `ready` says it is back. Errors in between are the same outage and stay quiet.
 */

export interface OutageLog {
  error(error: unknown): void;
  ready(): void;
}

export function createOutageLog(where: string, log: (line: string) => void = (line) => console.error(line)): OutageLog {
  let down = false;
  return {
    error(error) {
      if (down) return;
      down = true;
      const code = (error as { code?: unknown })?.code;
      const reason = typeof code === "string" ? code : error instanceof Error ? error.message.split("\n")[0] : String(error);
      log(`[troupe-web] Redis at ${where} is unreachable (${reason}); requests that need it answer 503 until it is back`);
    },
    ready() {
      if (!down) return;
      down = false;
      log(`[troupe-web] Redis at ${where} is reachable again`);
    },
  };
}

/** Where a Redis URL points, without credentials (they must not reach the log). */
export function redisWhere(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || "6379"}${parsed.pathname && parsed.pathname !== "/" ? parsed.pathname : ""}`;
  } catch {
    return "(invalid REDIS_URL)";
  }
}

/** Report a connection's errors and recoveries to `outage` (which also stops ioredis's own unhandled-error logging). */
export function watchConnection(connection: Redis, outage: OutageLog): Redis {
  connection.on("error", (error) => outage.error(error));
  connection.on("ready", () => outage.ready());
  return connection;
}
