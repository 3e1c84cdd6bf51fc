import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { asUser, mountScript, runUser, type RunUser } from "../src/process/runAs";
import type { RuntimeCommand } from "../src/process/runtimeCommand";

/** How a root runner's command drops to the run user (the real drop is run in runtimeTrust.int.test.ts). */

const nobody: RunUser = { name: "nobody", uid: 65534, gid: 65534 };
const folder = mkdtempSync(join(tmpdir(), "troupe-runas-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const command = (executable: string, cwd: string): RuntimeCommand => ({ executable, args: ["-m", "troupe", "run", "spec.json"], cwd, env: { PATH: "/usr/bin:/bin", HF_HOME: folder } });

describe("dropping a run to the run user", () => {
  it("is a plain setpriv exec when every path is reachable, and joins the run's cgroup first when it has one", () => {
    chmodSync(folder, 0o755);
    const plain = asUser(command("/usr/bin/python3", join(folder, "r1")), nobody, { workRoot: folder, repoRoot: folder });
    expect(plain.executable).toBe("setpriv");
    expect(plain.args.slice(0, 5)).toEqual(["--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"]);
    expect(plain.args.slice(-5)).toEqual(["/usr/bin/python3", "-m", "troupe", "run", "spec.json"]);
    expect(plain.env).toMatchObject({ HOME: join(folder, "r1", ".home"), USER: "nobody" });

    const joined = asUser(command("/usr/bin/python3", join(folder, "r1")), nobody, { workRoot: folder, repoRoot: folder, cgroup: "/sys/fs/cgroup/memory/x/troupe-run-r1" });
    expect(joined.executable).toBe("/bin/sh");
    expect(joined.args[1]).toBe("echo $$ > '/sys/fs/cgroup/memory/x/troupe-run-r1/cgroup.procs'\nexec \"$@\"");
  });

  it("covers a folder the user cannot enter with a tmpfs and binds back only what the run needs", () => {
    const locked = join(folder, "locked");
    mkdirSync(join(locked, "python", "bin"), { recursive: true });
    mkdirSync(join(locked, "secrets"), { recursive: true });
    chmodSync(locked, 0o700);
    const script = mountScript([join(locked, "python")], nobody)!;
    expect(script).toContain(`mount -t tmpfs -o mode=0755,size=1m troupe-hidden '${locked}'`);
    expect(script).toContain(`mount --move "$s/0" '${join(locked, "python")}'`);
    expect(script).not.toContain("secrets");
    expect(mountScript(["/usr/bin"], nobody)).toBeNull();
  });

  it("runs as the runner itself when it is not root, or when the operator says root", () => {
    expect(runUser({}, false)).toBeNull();
    expect(runUser({ TROUPE_RUN_USER: "root" }, true)).toBeNull();
    expect(runUser({ TROUPE_RUN_USER: "nobody" }, true)).toMatchObject({ name: "nobody", uid: 65534 });
    expect(() => runUser({ TROUPE_RUN_USER: "no-such-user-xyz" }, true)).toThrow(/no user on this host/);
  });
});
