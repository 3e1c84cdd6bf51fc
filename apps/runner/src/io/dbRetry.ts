/**
 * Retrying a database write across a Postgres outage. Only errors that say "the database is not
 * there" (refused or closed connections, a server shutting down, pool timeouts) are retried; any
 * other error (a constraint, a bug) is thrown at once, never retried for minutes.
 */

/** Prisma's "can't reach / timed out / connection closed / pool timeout" codes. */
const PRISMA_UNAVAILABLE = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
/** Driver adapter error kinds (`@prisma/driver-adapter-utils`) that mean the same. */
const ADAPTER_UNAVAILABLE = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections", "TransactionAlreadyClosed"]);
/** Node socket errors. */
const SOCKET_UNAVAILABLE = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
/** SQLSTATE: 08 connection exceptions, 57P0x admin/crash shutdown, cannot connect now. */
const SQLSTATE_UNAVAILABLE = /^(08\w{3}|57P0[1-3])$/;
const MESSAGE_UNAVAILABLE =
  /connection terminated|terminating connection|ECONNREFUSED|ECONNRESET|connection (?:is )?closed|server closed the connection|the database system is (?:starting up|shutting down)|can't reach database|timed out fetching a new connection|Connection refused/i;

/** Whether `error` (or any error in its `cause` chain) says Postgres is unreachable. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 8; depth++) {
    if (typeof e !== "object") return false;
    const o = e as { code?: unknown; kind?: unknown; message?: unknown; cause?: unknown; originalCode?: unknown };
    for (const code of [o.code, o.originalCode]) {
      if (typeof code === "string" && (PRISMA_UNAVAILABLE.has(code) || SOCKET_UNAVAILABLE.has(code) || SQLSTATE_UNAVAILABLE.test(code))) return true;
    }
    if (typeof o.kind === "string" && ADAPTER_UNAVAILABLE.has(o.kind)) return true;
    if (typeof o.message === "string" && MESSAGE_UNAVAILABLE.test(o.message)) return true;
    e = o.cause;
  }
  return false;
}

export interface RetryOptions {
  /** Give up (throw the last error) once failures have lasted this long. */
  giveUpAfterMs: number;
  /** Called before each wait, e.g. to log "Postgres unreachable, retrying in 2 s". */
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
  firstDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Runs `fn` until it succeeds; while it fails because the database is unavailable, waits (500 ms
 * doubling to 10 s) and tries again, for at most `giveUpAfterMs`. Other errors are thrown at once.
 */
export async function retryWhileDatabaseUnavailable<T>(fn: () => Promise<T>, options: RetryOptions): Promise<T> {
  const started = Date.now();
  const first = options.firstDelayMs ?? 500;
  const cap = options.maxDelayMs ?? 10_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      const elapsed = Date.now() - started;
      if (!isDatabaseUnavailable(error) || elapsed >= options.giveUpAfterMs) throw error;
      const delay = Math.min(cap, first * 2 ** Math.min(20, attempt - 1), options.giveUpAfterMs - elapsed);
      options.onRetry?.(error, attempt, delay);
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

/** An error as one line: Prisma's messages start with several lines of "Invalid `prisma.x()` invocation" before the cause. */
export function errorLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const lines = text.split("\n").map((l) => l.trim()).filter((l) => l !== "" && !/^Invalid `.*` invocation/.test(l) && !/^→?\s*\d+\s/.test(l));
  return lines.at(-1) ?? text;
}
