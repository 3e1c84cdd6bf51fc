import { describe, expect, it } from "vitest";
import { terminalLine } from "../src/features/runs/lib/terminalLine";

describe("log lines with carriage returns show as a terminal shows them", () => {
  it("a tqdm bar's redraws collapse to the last one", () => {
    expect(terminalLine(" 10%|█         | 1/10 [00:01<00:09]\r 20%|██        | 2/10 [00:02<00:08]\r100%|██████████| 10/10 [00:10<00:00]")).toBe(
      "100%|██████████| 10/10 [00:10<00:00]",
    );
  });

  it("a shorter redraw overwrites only what it covers; a trailing return changes nothing", () => {
    expect(terminalLine("loading 12345\rdone")).toBe("doneing 12345");
    expect(terminalLine("step 3\r")).toBe("step 3");
    expect(terminalLine("plain line")).toBe("plain line");
  });
});
