import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";

/** The repository's venv Python, which `scripts/setup.sh` installs the runtime into. */
export const RUNTIME_PYTHON = resolve(__dirname, "../../../../.venv/bin/python");

/**
 * Why the real Python runtime cannot run here, or null when it can. Tests that need it skip with
 * this reason in their title on a developer machine without the venv; under CI (`CI=true`) they
 * never skip, so a missing runtime fails them instead of passing unseen.
 */
export function runtimeUnavailable(): string | null {
  if (process.env.CI === "true") return null;
  if (!existsSync(RUNTIME_PYTHON)) return `${RUNTIME_PYTHON} does not exist (run scripts/setup.sh)`;
  const probe = spawnSync(RUNTIME_PYTHON, ["-c", "import troupe"], { encoding: "utf8", timeout: 60_000 });
  return probe.status === 0 ? null : `\`import troupe\` fails: ${(probe.stderr || "").trim().split("\n").at(-1)}`;
}
