import { execFile } from "node:child_process";
import { RunnerCapabilities } from "@troupe/contracts";
import { runtimeEnv } from "../process/childEnv";

export type ProbeResult = { ok: true; capabilities: RunnerCapabilities } | { ok: false; error: string };

/**
 * `TROUPE_PYTHON -m troupe capabilities --json`, with the same environment the runs get (childEnv), so
 * what is published is what this runner's runs will find. Never throws: a probe that fails (no runtime,
 * an old runtime without the command, a broken torch) is reported as such and the runner runs on.
 */
export function probeCapabilities(
  python: string,
  childEnv: Record<string, string> | undefined,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<ProbeResult> {
  return new Promise((resolve) => {
    execFile(
      python,
      ["-m", "troupe", "capabilities", "--json"],
      {
        env: runtimeEnv(process.env, { ...childEnv, PYTHONUNBUFFERED: "1" }),
        timeout: options.timeoutMs ?? 120_000,
        maxBuffer: 4 * 1024 * 1024,
        ...(options.signal ? { signal: options.signal } : {}),
      },
      (error, stdout, stderr) => {
        if (error) {
          const last = String(stderr).trim().split("\n").at(-1) ?? "";
          resolve({ ok: false, error: `${python} -m troupe capabilities failed: ${last || error.message}`.slice(0, 1000) });
          return;
        }
        let value: unknown;
        try {
          value = JSON.parse(String(stdout).trim().split("\n").at(-1) ?? "");
        } catch {
          resolve({ ok: false, error: "troupe capabilities printed no JSON" });
          return;
        }
        const parsed = RunnerCapabilities.safeParse(value);
        resolve(
          parsed.success
            ? { ok: true, capabilities: parsed.data }
            : { ok: false, error: `troupe capabilities answered an unexpected shape: ${parsed.error.issues[0]?.path.join(".")}: ${parsed.error.issues[0]?.message}` },
        );
      },
    );
  });
}
