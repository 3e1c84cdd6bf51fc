// Small process helpers shared by scripts/start.mjs and scripts/test.mjs.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/** Runs a command to completion, streaming its output; resolves with the exit code. */
export function run(cmd, args, { cwd, env, label } = {}) {
  return new Promise((resolve) => {
    if (label) console.log(`\n=== ${label} ===`);
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: "inherit" });
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
    child.on("error", (e) => {
      console.error(`${cmd}: ${e.message}`);
      resolve(127);
    });
  });
}

/** Like run() but throws with the label when the command fails. */
export async function mustRun(cmd, args, opts = {}) {
  const code = await run(cmd, args, opts);
  if (code !== 0) throw new Error(`${opts.label ?? cmd} failed (exit ${code})`);
}

/** Starts a long-running process whose output lines are prefixed with its name. */
export function startService(name, cmd, args, { cwd, env } = {}) {
  const child = spawn(cmd, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // own process group, so stop() reaches grandchildren (npx → node)
  });
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on("line", (line) => console.log(`[${name}] ${line}`));
  }
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const stop = async (graceMs = 15000) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {}
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
    }, graceMs);
    await exited;
    clearTimeout(timer);
  };
  return { name, child, exited, stop };
}

/** Polls a URL until it answers (any status below 500) or the time runs out. */
export async function waitForHttp(url, { timeoutMs = 120000, service } = {}) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (service && (service.child.exitCode !== null || service.child.signalCode !== null)) {
      throw new Error(`${service.name} exited before ${url} answered`);
    }
    try {
      const res = await fetch(url);
      if (res.status < 500) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${url} did not answer within ${Math.round(timeoutMs / 1000)} s`);
}
