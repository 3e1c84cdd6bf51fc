import { describe, expect, it } from "vitest";
import { EnvError, loadRunnerEnv } from "../src/env";
import { countGpuLines } from "../src/gpus/detectGpus";

const base = { DATABASE_URL: "postgresql://u@h:5432/db", REDIS_URL: "redis://h:6379" };
const noGpus = { detectGpus: () => 0 };

const errorOf = (env: Record<string, string>): EnvError => {
  try {
    loadRunnerEnv(env, noGpus);
  } catch (error) {
    if (error instanceof EnvError) return error;
    throw error;
  }
  throw new Error("expected an EnvError");
};

describe("runner env", () => {
  it("fills the documented defaults", () => {
    const env = loadRunnerEnv(base, { detectGpus: () => 3 });
    expect(env).toMatchObject({
      databaseUrl: base.DATABASE_URL,
      redisUrl: base.REDIS_URL,
      concurrency: 1,
      gpus: 3,
      cancelGraceMs: 10_000,
      stallTimeoutMs: 60_000,
      heartbeatMs: 5_000,
      shutdownGraceMs: 120_000,
      dbRetryMs: 900_000,
      requeueCheckMs: 2_000,
      requeueSweepMs: 60_000,
    });
    expect(env.workDir).toMatch(/\.troupe\/runs$/);
    expect(env.runnerId.length).toBeGreaterThan(0);
    expect(env.python).toMatch(/python/);
  });

  it("reads explicit values and treats empty strings as unset", () => {
    const env = loadRunnerEnv(
      { ...base, TROUPE_RUNNER_CONCURRENCY: "4", TROUPE_RUNNER_GPUS: "0", TROUPE_RUNNER_ID: "gpu-host-1", TROUPE_PYTHON: "", TROUPE_STALL_TIMEOUT_MS: "6000" },
      { detectGpus: () => 8 },
    );
    expect(env).toMatchObject({ concurrency: 4, gpus: 0, runnerId: "gpu-host-1", stallTimeoutMs: 6000, heartbeatMs: 1000 });
  });

  it("names a missing required variable", () => {
    const e = errorOf({ REDIS_URL: base.REDIS_URL });
    expect(e.variable).toBe("DATABASE_URL");
    expect(e.message).toBe("DATABASE_URL is required");
  });

  it("names a variable with a bad value and shows the value", () => {
    expect(errorOf({ ...base, TROUPE_RUNNER_CONCURRENCY: "two" }).message).toMatch(/^TROUPE_RUNNER_CONCURRENCY must be a whole number ≥ 1 \(got "two"\)/);
    expect(errorOf({ ...base, TROUPE_RUNNER_CONCURRENCY: "0" }).variable).toBe("TROUPE_RUNNER_CONCURRENCY");
    expect(errorOf({ ...base, REDIS_URL: "http://x" }).message).toMatch(/^REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/);
    expect(errorOf({ ...base, TROUPE_CANCEL_GRACE_MS: "-1" }).variable).toBe("TROUPE_CANCEL_GRACE_MS");
  });

  it("refuses a TROUPE_ACTOR_KEY_ENVS that names one of Troupe's own secrets (issue 30)", () => {
    const error = errorOf({ ...base, TROUPE_ACTOR_KEY_ENVS: "OPENAI_API_KEY, TROUPE_ADMIN_PASSWORD" });
    expect(error.variable).toBe("TROUPE_ACTOR_KEY_ENVS");
    expect(error.message).toMatch(/^TROUPE_ACTOR_KEY_ENVS names TROUPE_ADMIN_PASSWORD, one of Troupe's own secrets/);
    expect(errorOf({ ...base, TROUPE_ACTOR_KEY_ENVS: "lower-case" }).message).toMatch(/not an environment variable name/);
    expect(() => loadRunnerEnv({ ...base, TROUPE_ACTOR_KEY_ENVS: "OPENAI_API_KEY,HF_TOKEN" }, noGpus)).not.toThrow();
  });

  it("refuses a heartbeat too slow for the stall timeout", () => {
    const e = errorOf({ ...base, TROUPE_STALL_TIMEOUT_MS: "10000", TROUPE_HEARTBEAT_MS: "6000" });
    expect(e.variable).toBe("TROUPE_HEARTBEAT_MS");
    expect(e.message).toMatch(/half of TROUPE_STALL_TIMEOUT_MS/);
  });

  it("counts GPUs in nvidia-smi -L output", () => {
    const out = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\nGPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-2)\n  MIG 1g.10gb Device 0: (UUID: MIG-x)\n";
    expect(countGpuLines(out)).toBe(2);
    expect(countGpuLines("")).toBe(0);
  });
});
