// Small process helpers shared by scripts/start.mjs and scripts/test.mjs.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/** Commands run to completion by run(), so a shutdown can stop the one in progress. */
const foreground = new Set();

/**
 * Runs a command to completion, streaming its output; resolves with the exit code. With
 * `ownGroup` it runs in its own process group (a terminal's Ctrl-C reaches only us, and
 * stopForeground() stops it); otherwise Ctrl-C reaches it directly, as in a shell.
 */
export function run(cmd, args, { cwd, env, label, ownGroup = false } = {}) {
  return new Promise((resolve) => {
    if (label) console.log(`\n=== ${label} ===`);
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: "inherit", detached: ownGroup });
    foreground.add(child);
    child.on("exit", (code, signal) => {
      foreground.delete(child);
      resolve(code ?? (signal ? 128 : 1));
    });
    child.on("error", (e) => {
      foreground.delete(child);
      console.error(`${cmd}: ${e.message}`);
      resolve(127);
    });
  });
}

/** Stops the commands run() is waiting for (a build, a migration): SIGTERM, SIGKILL after `graceMs`. */
export async function stopForeground(graceMs = 5000) {
  await Promise.all(
    [...foreground].map(
      (child) =>
        new Promise((resolve) => {
          child.once("exit", resolve);
          signalGroup(child, "SIGTERM");
          setTimeout(() => signalGroup(child, "SIGKILL"), graceMs).unref();
        }),
    ),
  );
}

/** Like run() but throws with the label when the command fails. */
export async function mustRun(cmd, args, opts = {}) {
  const code = await run(cmd, args, opts);
  if (code !== 0) throw new Error(`${opts.label ?? cmd} failed (exit ${code})`);
}

function signalGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal); // not a group leader (ownGroup false)
    } catch {}
  }
}

/**
 * Starts a long-running process, in its own process group, whose output lines are prefixed with
 * its name. `stop()` sends SIGTERM (to the whole group, or with `signalGroup: false` to the process
 * alone, for a process that stops its own children in order) and SIGKILLs the group after `stopMs`.
 */
export function startService(name, cmd, args, { cwd, env, stopMs = 15000, signalGroup: toGroup = true } = {}) {
  const child = spawn(cmd, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // own process group: a terminal's Ctrl-C does not reach it, stop() does
  });
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on("line", (line) => console.log(`[${name}] ${line}`));
  }
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const signal = (sig) => {
    if (!alive()) return;
    if (toGroup) signalGroup(child, sig);
    else child.kill(sig);
  };
  const kill = () => signalGroup(child, "SIGKILL");
  const stop = async (graceMs = stopMs) => {
    if (alive()) {
      signal("SIGTERM");
      const timer = setTimeout(() => {
        console.log(`[${name}] did not stop within ${Math.round(graceMs / 1000)} s: killing it`);
        kill();
      }, graceMs);
      await exited;
      clearTimeout(timer);
    }
    // Whatever it left in its group (a worker it forked) goes with it.
    signalGroup(child, "SIGKILL");
  };
  return { name, child, exited, stop, signal, kill };
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
