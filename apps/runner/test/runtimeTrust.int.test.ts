import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runJob } from "../src/run/runJob";
import { createQueuedRun, openServices, testContext, type TestServices } from "./helpers/services";

/**
 * Issue 30, the runner's half: a run's process starts with an environment built from an allowlist (no secret
 * of the runner's), and, when the runner is root, as an unprivileged user who cannot read root's files. The
 * runtime is the runner tests' fake `troupe`, which writes what it was given (its whole environment, its uid,
 * which of the probed files it can read) to invocation.json in its run folder.
 */

let services: TestServices;
let secretsDir: string;
const saved: Record<string, string | undefined> = {};
const SECRETS = {
  TROUPE_ADMIN_PASSWORD: "admin-password-0001",
  AWS_SECRET_ACCESS_KEY: "aws-secret-0002",
  GITHUB_TOKEN: "ghp-secret-0003",
  HF_TOKEN: "hf-secret-0004",
  SOME_SERVICE_CONFIG: "not-allowlisted-0005",
};

beforeAll(() => {
  services = openServices();
  secretsDir = mkdtempSync(join(tmpdir(), "troupe-root-only-"));
});
afterAll(async () => {
  rmSync(secretsDir, { recursive: true, force: true });
  await services.close();
});
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});
function setEnv(vars: Record<string, string>) {
  for (const [k, v] of Object.entries(vars)) {
    if (!(k in saved)) saved[k] = process.env[k];
    process.env[k] = v;
  }
}

const fixtureSpec = (fixture: Record<string, unknown>) => ({ specVersion: 1, name: "fixture", fixture });

interface Invocation {
  environ: Record<string, string>;
  cgroup: string;
  uid: number;
  readable: Record<string, boolean>;
}

async function runFake(fixture: Record<string, unknown> = {}): Promise<Invocation> {
  const { ctx } = testContext(services);
  const runId = await createQueuedRun(services, fixtureSpec({ mode: "succeed", steps: 1, ...fixture }));
  const result = await runJob(ctx, runId);
  const run = await services.db.run.findUniqueOrThrow({ where: { id: runId } });
  expect({ result, error: run.error }).toEqual({ result: { kind: "finished", status: "succeeded" }, error: null });
  return JSON.parse(readFileSync(join(ctx.env.workDir, runId, "invocation.json"), "utf8")) as Invocation;
}

describe("the runtime's environment", () => {
  it("is built from an allowlist: no secret of the runner's, only the key variables the operator lists", async () => {
    setEnv({ ...SECRETS, OPENAI_API_KEY: "listed-key-0006", ANTHROPIC_API_KEY: "unlisted-key-0007", TROUPE_ACTOR_KEY_ENVS: "OPENAI_API_KEY", LC_ALL: "C.UTF-8" });
    const { environ } = await runFake();
    const values = Object.values(environ).join("\n");
    for (const secret of [...Object.values(SECRETS), "unlisted-key-0007", process.env.DATABASE_URL!, process.env.REDIS_URL!]) {
      expect(values).not.toContain(secret);
    }
    expect(environ.OPENAI_API_KEY).toBe("listed-key-0006");
    expect(environ).toMatchObject({ LC_ALL: "C.UTF-8", TROUPE_ACTOR_KEY_ENVS: "OPENAI_API_KEY", PYTHONUNBUFFERED: "1" });
    expect(environ.PATH).toBeTruthy();
    expect(Object.keys(environ).filter((k) => k.startsWith("npm_"))).toEqual([]);
  });
});

describe.skipIf(process.getuid?.() !== 0)("a run of a root runner", () => {
  it("runs as an unprivileged user that cannot read a root-only file, and still succeeds", async () => {
    const secret = join(secretsDir, "shadow");
    writeFileSync(secret, "root:$y$not-a-real-hash:::\n");
    chmodSync(secret, 0o600);
    const worldReadable = join(secretsDir, "..", `troupe-readable-${process.pid}`);
    writeFileSync(worldReadable, "ok\n");
    chmodSync(worldReadable, 0o644);
    try {
      const invocation = await runFake({ probeFiles: [secret, "/etc/shadow", worldReadable] });
      expect(invocation.uid).not.toBe(0);
      expect(invocation.readable).toEqual({ [secret]: false, "/etc/shadow": false, [worldReadable]: true });
      expect(statSync(secret).uid).toBe(0);
    } finally {
      rmSync(worldReadable, { force: true });
    }
  });

  it("TROUPE_RUN_USER=root is an operator's explicit opt-out", async () => {
    setEnv({ TROUPE_RUN_USER: "root" });
    expect((await runFake()).uid).toBe(0);
  });
});

describe.skipIf(process.getuid?.() !== 0)("the sandboxes of a root runner's run", () => {
  it("get a memory cgroup handed to the run user (TROUPE_SANDBOX_CGROUP), where this host can make one", async () => {
    const { environ, uid, cgroup } = await runFake();
    const folder = environ.TROUPE_SANDBOX_CGROUP;
    const own = readFileSync("/proc/self/cgroup", "utf8");
    if (!/:memory:/.test(own)) return expect(folder).toBeUndefined();
    expect(folder).toMatch(/\/troupe-run-[^/]+$/);
    expect(statSync(folder!).uid).toBe(uid);
    expect(statSync(join(folder!, "cgroup.procs")).uid).toBe(uid);
    expect(cgroup).toContain(`:memory:${folder!.replace(/^\/sys\/fs\/cgroup\/memory/, "")}\n`); // the runtime is in it
    // Once its run is over the folder is empty, and the next run's start removes it.
    await runFake();
    expect(existsSync(folder!)).toBe(false);
  });
});
