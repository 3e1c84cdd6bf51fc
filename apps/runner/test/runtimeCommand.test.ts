import { describe, expect, it } from "vitest";
import { runtimeCommand } from "../src/process/runtimeCommand";
import { runFiles } from "../src/run/materialise";

describe("runtimeCommand", () => {
  it("builds the runtime CLI of the common conventions", () => {
    const cmd = runtimeCommand(
      { python: "/opt/py" },
      { specPath: "/w/r1/spec.json", workDir: "/w/r1", seqStart: 3, gpuIds: [1, 3] },
      { DATABASE_URL: "postgresql://secret", REDIS_URL: "redis://x", HF_HUB_OFFLINE: "1", PATH: "/bin" },
    );
    expect(cmd.executable).toBe("/opt/py");
    expect(cmd.args).toEqual(["-m", "troupe", "run", "/w/r1/spec.json", "--events-fd", "3", "--seq-start", "3", "--work-dir", "/w/r1", "--control-fd", "4"]);
    expect(cmd.cwd).toBe("/w/r1");
    expect(cmd.env).toMatchObject({ PYTHONUNBUFFERED: "1", HF_HUB_OFFLINE: "1", CUDA_VISIBLE_DEVICES: "1,3", PATH: "/bin" });
    expect(cmd.env.DATABASE_URL).toBeUndefined();
    expect(cmd.env.REDIS_URL).toBeUndefined();
  });

  it("passes an allowlist of the runner's environment: no secret, only the listed key variables (issue 30)", () => {
    const cmd = runtimeCommand(
      { python: "p" },
      { specPath: "s", workDir: "w", seqStart: 2, gpuIds: [] },
      { PATH: "/bin", TROUPE_ADMIN_PASSWORD: "pw", AWS_SECRET_ACCESS_KEY: "aws", HF_TOKEN: "hf", OPENAI_API_KEY: "sk", MY_KEY: "k", TROUPE_ACTOR_KEY_ENVS: "MY_KEY", NCCL_DEBUG: "INFO", npm_config_cache: "/c" },
    );
    expect(cmd.env).toEqual({ PATH: "/bin", MY_KEY: "k", TROUPE_ACTOR_KEY_ENVS: "MY_KEY", NCCL_DEBUG: "INFO", PYTHONUNBUFFERED: "1", CUDA_VISIBLE_DEVICES: "", TROUPE_GPU_IDS: "" });
  });

  it("resumes a new attempt from the checkpoint it is given", () => {
    const cmd = runtimeCommand({ python: "p" }, { specPath: "s", workDir: "w", seqStart: 9, gpuIds: [], resumeFrom: "w/checkpoints/step-4" }, {});
    expect(cmd.args.slice(-2)).toEqual(["--resume", "w/checkpoints/step-4"]);
  });

  it("hides every GPU from a CPU run", () => {
    const cmd = runtimeCommand({ python: "p" }, { specPath: "s", workDir: "w", seqStart: 2, gpuIds: [] }, {});
    expect(cmd.env.CUDA_VISIBLE_DEVICES).toBe("");
  });

  it("refuses a run id that is not a safe folder name", () => {
    expect(runFiles("/w", "abc_DEF-1").workDir).toBe("/w/abc_DEF-1");
    expect(() => runFiles("/w", "../etc")).toThrow(/not a safe folder name/);
  });
});
