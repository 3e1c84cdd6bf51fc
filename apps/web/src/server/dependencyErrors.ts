/**
 * Whether an error means Postgres or Redis cannot be reached (so the answer is 503, "try again"),
 * as opposed to a bug (500). Walks `cause` chains: Prisma, the pg adapter, ioredis and BullMQ wrap
 * the socket error differently.
 */

const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND", "EPIPE", "EAI_AGAIN", "ENETUNREACH"]);
/** Prisma's "can't reach / timed out / server closed the connection" codes. */
const PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);

export type Dependency = "Postgres" | "Redis";

function fields(error: unknown): { name: string; message: string; code: unknown; kind: unknown; cause: unknown; stack: string } {
  const e = (typeof error === "object" && error !== null ? error : {}) as Record<string, unknown>;
  return {
    name: typeof e.name === "string" ? e.name : "",
    message: typeof e.message === "string" ? e.message : "",
    code: e.code,
    kind: e.kind ?? (e.cause as Record<string, unknown> | undefined)?.kind,
    cause: e.cause,
    stack: typeof e.stack === "string" ? e.stack : "",
  };
}

export function dependencyDown(error: unknown): Dependency | null {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current; depth++) {
    const f = fields(current);
    const text = `${f.name} ${f.message}`;
    if (/MaxRetriesPerRequest|Connection is closed|Stream isn't writeable|\[ioredis\]/i.test(text) || /ioredis/.test(f.stack) && typeof f.code === "string" && NETWORK_CODES.has(f.code)) {
      return "Redis";
    }
    if (typeof f.code === "string" && PRISMA_CODES.has(f.code)) return "Postgres";
    if (f.kind === "DatabaseNotReachable" || f.kind === "ConnectionClosed" || f.kind === "SocketTimeout") return "Postgres";
    if (/Can't reach database server|Connection terminated|terminating connection due to administrator command|the database system is (starting up|shutting down)|Server has closed the connection/i.test(text)) {
      return "Postgres";
    }
    if (typeof f.code === "string" && NETWORK_CODES.has(f.code)) return /6379|redis/i.test(text) ? "Redis" : "Postgres";
    if (typeof f.code === "string" && /^57P0[123]$/.test(f.code)) return "Postgres"; // admin shutdown, crash, cannot connect now
    current = f.cause;
  }
  return null;
}
