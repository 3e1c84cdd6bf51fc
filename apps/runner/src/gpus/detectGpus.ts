import { execFileSync } from "node:child_process";

/** Number of NVIDIA GPUs `nvidia-smi -L` lists (one "GPU n: …" line each); 0 when it is absent or fails. */
export function detectGpuCount(): number {
  try {
    const out = execFileSync("nvidia-smi", ["-L"], { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "ignore"] });
    return countGpuLines(out);
  } catch {
    return 0;
  }
}

export function countGpuLines(nvidiaSmiList: string): number {
  return nvidiaSmiList.split("\n").filter((line) => /^GPU \d+:/.test(line.trim())).length;
}
