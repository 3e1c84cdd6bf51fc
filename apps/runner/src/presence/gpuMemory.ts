import { execFile } from "node:child_process";

export interface GpuMemory {
  index: number;
  name: string;
  totalBytes: number;
  freeBytes: number;
}

const MIB = 1024 * 1024;

/** Parses `nvidia-smi --query-gpu=index,name,memory.total,memory.free --format=csv,noheader,nounits` (MiB). */
export function parseGpuMemory(csv: string): GpuMemory[] {
  return csv
    .split("\n")
    .map((line) => line.split(",").map((c) => c.trim()))
    .filter((cols) => cols.length === 4 && /^\d+$/.test(cols[0]!))
    .map(([index, name, total, free]) => ({ index: Number(index), name: name!, totalBytes: Number(total) * MIB, freeBytes: Number(free) * MIB }));
}

/** Free memory of each GPU now (cheap enough for every presence beat); [] without nvidia-smi. */
export function readGpuMemory(): Promise<GpuMemory[]> {
  return new Promise((resolve) => {
    execFile(
      "nvidia-smi",
      ["--query-gpu=index,name,memory.total,memory.free", "--format=csv,noheader,nounits"],
      { timeout: 10_000 },
      (error, stdout) => resolve(error ? [] : parseGpuMemory(String(stdout))),
    );
  });
}
