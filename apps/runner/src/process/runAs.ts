import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve, sep } from "node:path";
import type { RuntimeCommand } from "./runtimeCommand";

/**
 * The trainer runs as an unprivileged user when the runner runs as root (issue 30), so a path that slips
 * past the data-root checks still reads nothing of root's (/etc/shadow, /root/.ssh, other services' files).
 *
 * - Runner as root (the Docker images, a bare-metal systemd unit): each runtime runs as TROUPE_RUN_USER
 *   (default `troupe` when that user exists, else `nobody`). Its run folder is chowned to that user; the
 *   interpreter, the repository, the runs folder, the Hugging Face cache and PYTHONPATH entries are made
 *   reachable even where they live under a folder only root may enter (/root): in a private mount namespace
 *   (`unshare --mount`) such a folder is covered by an empty tmpfs and only those paths are bound back in.
 *   Then `setpriv` drops to the user with no capabilities and no groups, and execs Python: the runtime keeps
 *   the pid the runner spawned (signals and exit statuses are its own). GPUs (/dev/nvidia*) are world-usable
 *   on standard installs.
 * - TROUPE_RUN_USER=root: an operator's explicit opt-out (runs as root, logged loudly at start).
 * - Runner not root: the runtime runs as the runner's own user; nothing changes (that user's files are what a
 *   run could reach past the checks, so run the runner as a user that holds nothing else).
 */

export interface RunUser {
  name: string;
  uid: number;
  gid: number;
}

/** getent's answer for a user name, or null. */
function lookUp(name: string): RunUser | null {
  try {
    const line = execFileSync("getent", ["passwd", name], { encoding: "utf8" }).trim();
    const [user, , uid, gid] = line.split(":");
    if (!user || uid === undefined || gid === undefined) return null;
    return { name: user, uid: Number(uid), gid: Number(gid) };
  } catch {
    return null;
  }
}

export class RunUserError extends Error {}

/**
 * Who runs the runtime: null when it runs as the runner itself (not root, or TROUPE_RUN_USER=root).
 * Throws a RunUserError when TROUPE_RUN_USER names no user.
 */
export function runUser(parentEnv: NodeJS.ProcessEnv = process.env, isRoot = process.getuid?.() === 0): RunUser | null {
  if (!isRoot) return null;
  const wanted = parentEnv.TROUPE_RUN_USER?.trim();
  if (wanted === "root") return null;
  if (wanted) {
    const user = lookUp(wanted);
    if (!user) throw new RunUserError(`TROUPE_RUN_USER names "${wanted}", which is no user on this host (getent passwd ${wanted})`);
    if (user.uid === 0) return null;
    return user;
  }
  const found = lookUp("troupe") ?? lookUp("nobody");
  if (!found) throw new RunUserError("the runner runs as root and neither a `troupe` nor a `nobody` user exists: create one or set TROUPE_RUN_USER");
  return found;
}

/** Whether `user` may enter (search) a folder with these bits and owner. */
function canEnter(user: RunUser, mode: number, uid: number, gid: number): boolean {
  if (uid === user.uid) return (mode & 0o100) !== 0;
  if (gid === user.gid) return (mode & 0o010) !== 0;
  return (mode & 0o001) !== 0;
}

/** The highest folder above `path` (exclusive) that `user` may not enter, or null. */
function blockedAncestor(path: string, user: RunUser): string | null {
  const parts = path.split(sep).filter(Boolean);
  for (let i = 0; i < parts.length; i++) {
    const dir = sep + parts.slice(0, i).join(sep);
    try {
      const st = statSync(dir);
      if (!canEnter(user, st.mode, st.uid, st.gid)) return dir;
    } catch {
      return null;
    }
  }
  return null;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const inside = (path: string, folder: string) => path === folder || path.startsWith(folder === sep ? sep : folder + sep);

/**
 * The shell script run (as root, in a private mount namespace) before the drop: each needed path under a
 * folder the user cannot enter is bound to a staging folder, the blocking folder is covered by a tmpfs,
 * and the path is moved back to where it was. Exported for tests.
 */
export function mountScript(needed: readonly string[], user: RunUser): string | null {
  const real = [...new Set(needed.flatMap((p) => { try { return [realpathSync(p)]; } catch { return []; } }))];
  const outermost = real.filter((p) => !real.some((q) => q !== p && inside(p, q)));
  const moves: { path: string; blocked: string }[] = [];
  for (const path of outermost) {
    const blocked = blockedAncestor(path, user);
    if (blocked) moves.push({ path, blocked });
  }
  if (moves.length === 0) return null;
  // Only the topmost blocking folders get a tmpfs (one under another is covered with it).
  const covers = [...new Set(moves.map((m) => m.blocked))].filter((b, _, all) => !all.some((o) => o !== b && inside(b, o)));
  const lines = ["set -e", "umask 022", "s=$(mktemp -d /tmp/.troupe-mounts.XXXXXX)"];
  moves.forEach((m, i) => lines.push(`mkdir "$s/${i}"`, `mount --rbind ${quote(m.path)} "$s/${i}"`));
  for (const c of covers) lines.push(`mount -t tmpfs -o mode=0755,size=1m troupe-hidden ${quote(c)}`);
  moves
    .map((m, i) => ({ ...m, i }))
    .sort((a, b) => a.path.length - b.path.length)
    .forEach((m) => lines.push(`mkdir -p ${quote(m.path)}`, `mount --move "$s/${m.i}" ${quote(m.path)}`));
  lines.push(`rmdir "$s"/* "$s"`);
  return lines.join("\n");
}

/** Folders the runtime must be able to read, from the command it runs and the runner's settings. */
export function neededPaths(command: RuntimeCommand, workRoot: string, repoRoot: string): string[] {
  const python = command.executable.includes(sep) ? command.executable : onPath(command.executable, command.env.PATH ?? "");
  const fromPython = python ? [dirname(dirname(resolve(python))), dirname(dirname(safeReal(python)))] : [];
  const env = command.env;
  const hf = env.HF_HOME ?? join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "huggingface");
  const pythonPath = (env.PYTHONPATH ?? "").split(":").filter((p) => p.startsWith(sep));
  return [...fromPython, repoRoot, workRoot, hf, ...pythonPath].filter(exists);
}

/** Where a bare command name (`python3`) is found on PATH, as the shell would find it. */
function onPath(name: string, path: string): string | null {
  for (const dir of path.split(":").filter((d) => d.startsWith(sep))) {
    try {
      const candidate = join(dir, name);
      if (statSync(candidate).isFile()) return candidate;
    } catch {}
  }
  return null;
}

function safeReal(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function exists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** Gives the run folder (recursively) to the user and makes the runs folder enterable (not listable) by it. */
export function handOverRunFolder(workDir: string, workRoot: string, user: RunUser): void {
  const root = statSync(workRoot);
  if (!canEnter(user, root.mode, root.uid, root.gid)) chmodSync(workRoot, (root.mode & 0o7777) | 0o001);
  const home = join(workDir, ".home");
  mkdirSync(home, { recursive: true });
  const walk = (path: string) => {
    const st = lstatSync(path);
    if (st.uid !== user.uid || st.gid !== user.gid) chownSync(path, user.uid, user.gid);
    if (st.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(workDir);
}

/**
 * The command that runs `command` as `user`: `unshare --mount` (when paths must be uncovered) and `setpriv`,
 * both execs, so the runtime keeps the spawned pid. HOME is the run folder's `.home`; HF_HOME stays where the
 * runner's cache is.
 */
export function asUser(command: RuntimeCommand, user: RunUser, opts: { workRoot: string; repoRoot: string; cgroup?: string | null }): RuntimeCommand {
  const env = { ...command.env };
  env.HF_HOME ??= join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "huggingface");
  env.HOME = join(command.cwd, ".home");
  env.USER = env.LOGNAME = user.name;
  const drop = ["setpriv", `--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--", command.executable, ...command.args];
  const mounts = mountScript(neededPaths({ ...command, env }, opts.workRoot, opts.repoRoot), user);
  // The runtime joins its run's cgroup (as root, before the drop): a folder in use is never removed.
  const joinCgroup = opts.cgroup ? `echo $$ > ${quote(`${opts.cgroup}/cgroup.procs`)}` : null;
  const script = [mounts, joinCgroup].filter(Boolean).join("\n");
  if (!script) return { ...command, executable: drop[0]!, args: drop.slice(1), env };
  const shell = ["/bin/sh", "-c", `${script}\nexec "$@"`, "troupe-run-as", ...drop];
  if (!mounts) return { ...command, executable: shell[0]!, args: shell.slice(1), env };
  return { ...command, executable: "unshare", args: ["--mount", "--propagation", "private", "--", ...shell], env };
}

/**
 * A memory cgroup for the run's sandboxes, handed to the run user (an unprivileged runtime cannot make
 * cgroups of its own): `<this process's memory cgroup>/troupe-run-<run folder name>`, its files chowned, so
 * the runtime makes one child per sandbox under it (gpu-runtime/src/troupe/sandbox/memory_scope.py reads
 * TROUPE_SANDBOX_CGROUP). cgroup v1's memory controller only (v2 would need the trainer in a leaf of its own;
 * there the sandboxes say they are bounded per process). The runtime itself joins the folder (asUser), so the
 * folders of earlier runs that are empty (no runtime, no sandbox left) are removed here; one in use cannot be.
 * Null where none can be made: the sandboxes then say so.
 */
export function delegateCgroup(workDir: string, user: RunUser): string | null {
  let base: string | null = null;
  try {
    for (const line of readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
      const [, controllers, path] = line.split(":");
      if (controllers?.split(",").includes("memory") && path !== undefined) base = join("/sys/fs/cgroup/memory", path);
    }
  } catch {
    return null;
  }
  if (!base || !existsSync(base)) return null;
  try {
    for (const name of readdirSync(base)) if (name.startsWith("troupe-run-")) rmdirQuiet(join(base, name)); // fails while in use
  } catch {}
  const folder = join(base, `troupe-run-${workDir.split(sep).filter(Boolean).at(-1)}`);
  try {
    if (!existsSync(folder)) mkdirSync(folder);
    if (!existsSync(join(folder, "memory.limit_in_bytes"))) {
      rmdirQuiet(folder);
      return null;
    }
    chownSync(folder, user.uid, user.gid);
    for (const name of readdirSync(folder)) chownSync(join(folder, name), user.uid, user.gid);
    return folder;
  } catch {
    rmdirQuiet(folder);
    return null;
  }
}

function rmdirQuiet(path: string): void {
  try {
    rmdirSync(path);
  } catch {}
}

/**
 * What supervise spawns: `command` as is when the runtime runs as the runner, else the run folder handed
 * over to the run user and the command wrapped to drop to it.
 */
export function forRunUser(command: RuntimeCommand, opts: { workRoot: string; repoRoot: string; parentEnv?: NodeJS.ProcessEnv }): RuntimeCommand {
  const user = runUser(opts.parentEnv ?? process.env);
  // A missing interpreter is left to fail at spawn, as it would without the drop (ENOENT, named).
  const found = command.executable.includes(sep) ? exists(command.executable) : onPath(command.executable, command.env.PATH ?? "") !== null;
  if (!user || !found) return command;
  handOverRunFolder(command.cwd, opts.workRoot, user);
  const cgroup = delegateCgroup(command.cwd, user);
  return asUser(cgroup ? { ...command, env: { ...command.env, TROUPE_SANDBOX_CGROUP: cgroup } } : command, user, { ...opts, cgroup });
}
