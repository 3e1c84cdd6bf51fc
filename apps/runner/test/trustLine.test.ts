import type { RunnerCapabilities } from "@troupe/contracts";
import { describe, expect, it } from "vitest";
import { describeTrust } from "../src/presence/trustLine";

const caps = (detail: string, hostPolicy?: RunnerCapabilities["hostPolicy"]) =>
  ({ sandbox: { usable: true, mode: "bwrap", detail }, ...(hostPolicy ? { hostPolicy } : {}) }) as unknown as RunnerCapabilities;

describe("the capabilities line's trust part", () => {
  it("says how sandbox memory is bounded and what the operator lists", () => {
    const line = describeTrust(
      caps("user code runs under bubblewrap (/usr/bin/bwrap); memory: no cgroup can be made here (read-only), so a sandbox's memory is bounded per process only: up to processes x memoryMb", {
        actorKeyEnvs: ["OPENAI_API_KEY"],
        apiHosts: [],
        dataRoots: ["/data"],
      }),
    );
    expect(line).toBe(
      "; sandbox memory: no cgroup can be made here (read-only), so a sandbox's memory is bounded per process only: up to processes x memoryMb; API hosts: none; key variables: OPENAI_API_KEY; data roots: the run folder, /data",
    );
  });

  it("says that an older runtime publishes no lists", () => {
    expect(describeTrust(caps("bubblewrap"))).toBe("; no host policy published (an older runtime): API actors and host paths are refused");
  });
});
