import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: plain ESM JavaScript helper without type declarations
import { endOrphans, portHolder, recordPid, startTime } from "../lib/orphans.mjs";
// @ts-expect-error: plain ESM JavaScript helper without type declarations
import { freePort } from "../lib/services.mjs";

/**
 * Issue 30, finding 9, in the start script's own helper: services a start left running when it was killed
 * with SIGKILL (real detached processes here, one listening on a port as the web app does) are found by the
 * pid files that start wrote and ended, their process groups with them; a reused pid is never touched; a
 * held port names the pid holding it. scripts/test/start.int.test.ts checks the same through start.sh.
 */

const dataDir = mkdtempSync(join(tmpdir(), "troupe-orphans-"));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) {
    try {
      process.kill(-c.pid!, "SIGKILL");
    } catch {}
  }
  rmSync(dataDir, { recursive: true, force: true });
});

/** A detached server (its own process group, as startService makes them) with a child of its own. */
async function orphanServer(port: number): Promise<ChildProcess> {
  const code = `require("node:child_process").spawn("sleep", ["300"], { stdio: "ignore" }); require("node:http").createServer(() => {}).listen(${port}, "127.0.0.1", () => console.log("up"));`;
  const child = spawn(process.execPath, ["-e", code], { detached: true, stdio: ["ignore", "pipe", "ignore"] });
  children.push(child);
  await new Promise<void>((resolve) => child.stdout!.once("data", () => resolve()));
  return child;
}

/** Whether any process of the group still runs (a zombie waiting for its reaper does not count). */
const groupAlive = (pgid: number) =>
  readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .some((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, "utf8");
        const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        return Number(pgrp) === pgid && state !== "Z";
      } catch {
        return false;
      }
    });

describe("orphans of a killed start", () => {
  it("says which pid holds the port, and ends what its pid files name, group and all", async () => {
    const port = await freePort();
    const web = await orphanServer(port);
    expect(portHolder(port)).toEqual({ pid: web.pid, command: expect.stringContaining("createServer") });
    recordPid(dataDir, "web", web.pid);
    const logged: string[] = [];
    const ended = await endOrphans(dataDir, { log: (s: string) => logged.push(s), graceMs: 5_000 });
    expect(ended.map((r: { name: string }) => r.name)).toEqual(["web"]);
    expect(logged[0]).toMatch(new RegExp(`web: pid ${web.pid} was left running by an earlier start`));
    await new Promise((r) => setTimeout(r, 200));
    expect(groupAlive(web.pid!)).toBe(false); // its `sleep` child went with it
    expect(portHolder(port)).toBeNull();
    expect(readdirSync(join(dataDir, "pids"))).toEqual([]);
  });

  it("never ends a process that only reuses a recorded pid", async () => {
    const other = await orphanServer(await freePort());
    writeFileSync(join(dataDir, "pids", "runner.json"), JSON.stringify({ name: "runner", pid: other.pid, startTime: String(Number(startTime(other.pid)) - 1) }));
    expect(await endOrphans(dataDir, { log: () => {}, graceMs: 1_000 })).toEqual([]);
    expect(groupAlive(other.pid!)).toBe(true);
  });
});
