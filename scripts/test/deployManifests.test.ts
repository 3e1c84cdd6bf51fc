import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse } from "yaml";
import { RunSpec } from "@troupe/contracts";

// No Kubernetes or Slurm cluster exists where we test (#28 item 4), so deploy/ is checked statically: the
// KubeRay manifests have the fields the operator needs and agree with each other, with the image and with the
// spec they run; the sbatch script parses (`bash -n`) and Slurm would read all of its #SBATCH lines.
const root = resolve(__dirname, "../..");
const read = (path: string) => readFileSync(resolve(root, path), "utf8");
const spec = RunSpec.parse(JSON.parse(read("deploy/ray-spec.json")));
const ranks = Math.max(...spec.actors.map((a) => Math.max(a.placement.gpus.length, a.placement.processes ?? 1)));
const rayVersion = /^FROM rayproject\/ray:(\d+\.\d+\.\d+)/m.exec(read("deploy/ray.Dockerfile"))?.[1];

type Container = { name: string; image: string; command?: string[]; resources?: { requests?: Record<string, string>; limits?: Record<string, string> }; volumeMounts?: { name: string; mountPath: string }[] };
type PodTemplate = { spec: { containers: Container[]; volumes?: { name: string }[] } };
type ClusterSpec = {
  rayVersion: string;
  headGroupSpec: { rayStartParams: Record<string, string>; template: PodTemplate };
  workerGroupSpecs: { groupName: string; replicas: number; minReplicas: number; maxReplicas: number; rayStartParams: Record<string, string>; template: PodTemplate }[];
};

const manifests = {
  "deploy/kuberay/raycluster.yaml": (doc: { spec: ClusterSpec }) => doc.spec,
  "deploy/kuberay/rayjob.yaml": (doc: { spec: { rayClusterSpec: ClusterSpec } }) => doc.spec.rayClusterSpec,
};
const mounts = (t: PodTemplate) => t.spec.containers.flatMap((c) => c.volumeMounts ?? []).map((m) => m.mountPath);
const under = (path: string, dirs: string[]) => dirs.some((d) => path.startsWith(`${d}/`));

describe("deploy/ray-spec.json", () => {
  it("is a valid RunSpec that joins an existing Ray cluster with GPU ranks", () => {
    expect(spec.cluster).toMatchObject({ kind: "ray", address: "auto" });
    expect(ranks).toBeGreaterThanOrEqual(2);
    expect(spec.trainer.device).toBe("cuda");
  });
});

describe.each(Object.entries(manifests))("%s", (path, clusterOf) => {
  const doc = parse(read(path));
  const cluster = clusterOf(doc);
  const templates = [cluster.headGroupSpec.template, ...cluster.workerGroupSpecs.map((w) => w.template)];

  it("is a KubeRay ray.io/v1 object with a head and worker groups", () => {
    expect(doc.apiVersion).toBe("ray.io/v1");
    expect(doc.kind).toBe(path.endsWith("rayjob.yaml") ? "RayJob" : "RayCluster");
    expect(doc.metadata.name).toMatch(/^[a-z0-9-]+$/);
    expect(cluster.headGroupSpec.template.spec.containers.length).toBeGreaterThan(0);
    expect(cluster.workerGroupSpecs.length).toBeGreaterThan(0);
  });

  it("runs one image everywhere, built by deploy/ray.Dockerfile at the same Ray version", () => {
    expect(rayVersion).toBeDefined();
    expect(cluster.rayVersion).toBe(rayVersion);
    const images = new Set(templates.flatMap((t) => t.spec.containers.map((c) => c.image)));
    expect([...images]).toEqual(["troupe-ray:latest"]);
    expect(read("deploy/ray.Dockerfile")).toMatch(/gpu-runtime\[[^\]]*cluster[^\]]*\]/);
  });

  it("asks for the GPUs Ray advertises, and enough of them for the spec's ranks", () => {
    const gpusOf = (params: Record<string, string>, template: PodTemplate) => {
      const perPod = Number(params["num-gpus"]);
      const [container] = template.spec.containers;
      expect(perPod).toBeGreaterThan(0); // the head too: the run starts there and checks trainer.device "cuda"
      expect(Number(container!.resources?.requests?.["nvidia.com/gpu"])).toBe(perPod);
      expect(Number(container!.resources?.limits?.["nvidia.com/gpu"])).toBe(perPod);
      return perPod;
    };
    let gpus = gpusOf(cluster.headGroupSpec.rayStartParams, cluster.headGroupSpec.template);
    for (const group of cluster.workerGroupSpecs) {
      expect(group.minReplicas).toBeLessThanOrEqual(group.replicas);
      expect(group.replicas).toBeLessThanOrEqual(group.maxReplicas);
      gpus += gpusOf(group.rayStartParams, group.template) * group.minReplicas;
    }
    expect(gpus).toBeGreaterThanOrEqual(ranks);
    expect(spec.cluster).toMatchObject({ strategy: "SPREAD" }); // one rank per pod: the run crosses hosts
  });

  it("mounts only volumes it declares, and the work folder on every node", () => {
    for (const t of templates) {
      const declared = new Set((t.spec.volumes ?? []).map((v) => v.name));
      for (const c of t.spec.containers) for (const m of c.volumeMounts ?? []) expect(declared, `${c.name} mounts ${m.name}`).toContain(m.name);
      expect(mounts(t)).toContain("/troupe/work");
    }
    expect(mounts(cluster.headGroupSpec.template)).toContain("/troupe/spec");
  });

  if (path.endsWith("rayjob.yaml")) {
    it("runs `python -m troupe run` on the spec mounted on the head, its work folder on shared storage", () => {
      const words = String(doc.spec.entrypoint).split(/\s+/);
      expect(words.slice(0, 4)).toEqual(["python", "-m", "troupe", "run"]);
      const head = mounts(cluster.headGroupSpec.template);
      expect(under(words[4]!, head)).toBe(true);
      const workDir = words[words.indexOf("--work-dir") + 1]!;
      for (const t of templates) expect(mounts(t)).toContain(workDir);
      expect(doc.spec.shutdownAfterJobFinishes).toBe(true);
    });
  }
});

describe("deploy/slurm/troupe-ray.sbatch", () => {
  const script = read("deploy/slurm/troupe-ray.sbatch");
  const lines = script.split("\n");
  const options = new Map(
    lines.filter((l) => l.startsWith("#SBATCH")).map((l) => {
      const m = /^#SBATCH --([a-z-]+)(?:=(\S+))?\s*$/.exec(l);
      expect(m, `a well-formed #SBATCH line: ${l}`).not.toBeNull();
      return [m![1]!, m![2] ?? ""] as const;
    }),
  );

  it("parses with bash -n", () => {
    const result = spawnSync("bash", ["-n", resolve(root, "deploy/slurm/troupe-ray.sbatch")], { encoding: "utf8" });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
  });

  it("puts every #SBATCH line before the first command (Slurm stops reading them there)", () => {
    const firstCommand = lines.findIndex((l, i) => i > 0 && l.trim() !== "" && !l.startsWith("#"));
    const lastSbatch = lines.map((l) => l.startsWith("#SBATCH")).lastIndexOf(true);
    expect(lastSbatch).toBeGreaterThan(0);
    expect(lastSbatch).toBeLessThan(firstCommand);
  });

  it("asks for one task per node and enough GPUs for the spec's ranks", () => {
    expect(options.get("ntasks-per-node")).toBe("1");
    const gpus = Number(options.get("nodes")) * Number(options.get("gpus-per-node"));
    expect(gpus).toBeGreaterThanOrEqual(ranks);
    for (const key of ["job-name", "time", "cpus-per-task"]) expect(options.has(key), key).toBe(true);
  });

  it("starts a Ray head and workers, then `python -m troupe run` on the default spec", () => {
    expect(script).toMatch(/"\$RAY" start --head /);
    expect(script).toMatch(/"\$RAY" start --address="\$HEAD_IP:\$PORT"/);
    expect(script).toMatch(/"\$PYTHON" -m troupe run "\$SPEC" --events .* --work-dir "\$WORK_DIR"/);
    expect(script).toMatch(/"\$RAY" stop --force/); // on exit, every node
    const defaultSpec = /SPEC=\$\(realpath "\$\{1:-([^}]+)\}"\)/.exec(script)?.[1];
    expect(defaultSpec).toBe("deploy/ray-spec.json");
    expect(existsSync(resolve(root, defaultSpec!))).toBe(true);
  });
});
