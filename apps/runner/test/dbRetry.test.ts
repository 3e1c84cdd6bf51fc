import { describe, expect, it } from "vitest";
import { errorLine, isDatabaseUnavailable, retryWhileDatabaseUnavailable } from "../src/io/dbRetry";

describe("retrying across a Postgres outage", () => {
  it("tells an unreachable database from other errors, through the cause chain", () => {
    expect(isDatabaseUnavailable(Object.assign(new Error("x"), { code: "P1001" }))).toBe(true);
    expect(isDatabaseUnavailable(new Error("Can't reach database server at 127.0.0.1:5432"))).toBe(true);
    expect(isDatabaseUnavailable(new Error("Database error. Code: `57P01`. Message: `terminating connection due to administrator command`"))).toBe(true);
    expect(isDatabaseUnavailable(new Error("wrapped", { cause: { kind: "ConnectionClosed" } }))).toBe(true);
    expect(isDatabaseUnavailable(new Error("wrapped", { cause: Object.assign(new Error("socket"), { code: "ECONNREFUSED" }) }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error("Unique constraint failed"), { code: "P2002" }))).toBe(false);
    expect(isDatabaseUnavailable(new Error("transitionRun(x): succeeded → queued is not an allowed transition"))).toBe(false);
  });

  it("retries while the database is away, then succeeds; other errors are thrown at once", async () => {
    let calls = 0;
    const waits: number[] = [];
    const value = await retryWhileDatabaseUnavailable(
      async () => {
        calls += 1;
        if (calls < 4) throw new Error("Connection terminated unexpectedly");
        return "stored";
      },
      { giveUpAfterMs: 10_000, firstDelayMs: 5, onRetry: (_e, _a, ms) => waits.push(ms) },
    );
    expect({ value, calls, waits }).toEqual({ value: "stored", calls: 4, waits: [5, 10, 20] });

    let other = 0;
    await expect(
      retryWhileDatabaseUnavailable(async () => {
        other += 1;
        throw new Error("a bug");
      }, { giveUpAfterMs: 10_000 }),
    ).rejects.toThrow("a bug");
    expect(other).toBe(1);
  });

  it("gives up after giveUpAfterMs and throws the last error", async () => {
    const started = Date.now();
    await expect(
      retryWhileDatabaseUnavailable(async () => {
        throw new Error("Can't reach database server");
      }, { giveUpAfterMs: 120, firstDelayMs: 10, maxDelayMs: 20 }),
    ).rejects.toThrow("Can't reach database server");
    expect(Date.now() - started).toBeGreaterThanOrEqual(120);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("prints a Prisma error as its last line", () => {
    expect(errorLine(new Error("\nInvalid `prisma.run.findMany()` invocation:\n\n\nCan't reach database server at 127.0.0.1:1"))).toBe("Can't reach database server at 127.0.0.1:1");
  });
});
