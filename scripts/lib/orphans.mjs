// What a start leaves behind when it is killed with SIGKILL (issue 30, finding 9): the web app and the
// runner run in process groups of their own, so they outlive a killed start script, and the next start
// stopped with EADDRINUSE. Each start writes a pid file per service it starts (pid + the kernel's start
// time of that process, so a reused pid is never mistaken for ours); the next start ends what those files
// name, in the shutdown order (runner first: it hands its runs back while Postgres and Redis, the killed
// start's own orphans, still run; they are stopped by their own pid files in services.mjs). A port still
// held after that is reported with the pid and command holding it.
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The kernel's start time of a process (field 22 of /proc/<pid>/stat, in clock ticks), or null when it is gone. */
export function startTime(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] === "Z") return null; // a zombie is gone, only not reaped
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

function commandLine(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim();
  } catch {
    return "";
  }
}

const pidFolder = (dataDir) => join(dataDir, "pids");

/** Records a service this start spawned (a process group leader), so a later start can end it if we die. */
export function recordPid(dataDir, name, pid) {
  mkdirSync(pidFolder(dataDir), { recursive: true });
  writeFileSync(join(pidFolder(dataDir), `${name}.json`), JSON.stringify({ name, pid, startTime: startTime(pid), command: commandLine(pid) }));
}

/** Forgets a service that stopped cleanly. */
export function forgetPid(dataDir, name) {
  rmSync(join(pidFolder(dataDir), `${name}.json`), { force: true });
}

const alive = (pid, since) => since !== null && startTime(pid) === since;

function signalGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {}
  }
}

/**
 * Ends the services an earlier, killed start left running (those its pid files name and that are still the
 * same processes), runner first; SIGTERM, then SIGKILL to the whole group after `graceMs`. Returns what it ended.
 */
export async function endOrphans(dataDir, { log = console.log, graceMs = 30_000, order = ["runner", "web"] } = {}) {
  const folder = pidFolder(dataDir);
  if (!existsSync(folder)) return [];
  const records = readdirSync(folder)
    .filter((f) => f.endsWith(".json"))
    .map((f) => {
      try {
        return JSON.parse(readFileSync(join(folder, f), "utf8"));
      } catch {
        return null;
      }
    })
    .filter((r) => r && Number.isInteger(r.pid));
  records.sort((a, b) => (order.indexOf(a.name) + 1 || 99) - (order.indexOf(b.name) + 1 || 99));
  const ended = [];
  for (const r of records) {
    if (alive(r.pid, r.startTime ?? null)) {
      log(`${r.name}: pid ${r.pid} was left running by an earlier start that was killed; stopping it`);
      signalGroup(r.pid, "SIGTERM");
      const deadline = Date.now() + graceMs;
      while (alive(r.pid, r.startTime) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100));
      if (alive(r.pid, r.startTime)) {
        log(`${r.name}: pid ${r.pid} did not stop within ${Math.round(graceMs / 1000)} s: killing it`);
      }
      signalGroup(r.pid, "SIGKILL"); // and whatever it left in its group
      ended.push(r);
    }
    forgetPid(dataDir, r.name);
  }
  return ended;
}

/** Socket inodes listening on `port` (IPv4 and IPv6), from /proc/net/tcp*. */
function listeningInodes(port) {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && cols[1]?.endsWith(`:${hex}`) && cols[3] === "0A") inodes.add(cols[9]);
    }
  }
  return inodes;
}

/** The process listening on `port` on this host ({ pid, command }), or null when none (or it cannot be seen). */
export function portHolder(port) {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return null;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let fds = [];
    try {
      fds = readdirSync(`/proc/${name}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${name}/fd/${fd}`));
        if (m && inodes.has(m[1])) return { pid: Number(name), command: commandLine(Number(name)) };
      } catch {}
    }
  }
  return { pid: null, command: "" };
}
