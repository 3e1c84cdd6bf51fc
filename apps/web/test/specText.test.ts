import { DEMO_SPEC, RunSpec } from "@troupe/contracts";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { specFileName, specText } from "../src/lib/specText";

describe("a spec as text (the run's Spec tab, the composer's export)", () => {
  it("YAML and JSON both read back as the same RunSpec, keys in the same order", () => {
    for (const format of ["yaml", "json"] as const) {
      const text = specText(DEMO_SPEC, format);
      const back = format === "yaml" ? parse(text) : JSON.parse(text);
      expect(RunSpec.parse(back)).toEqual(DEMO_SPEC);
      expect(JSON.stringify(back)).toBe(JSON.stringify(DEMO_SPEC));
    }
    expect(specText(DEMO_SPEC, "yaml")).toMatch(/^specVersion: 1\nname: /);
  });

  it("names the file after the spec, keeping only safe characters", () => {
    expect(specFileName("Echo the letter (tiny GRPO demo)", "yaml")).toBe("Echo-the-letter-tiny-GRPO-demo.yaml");
    expect(specFileName(undefined, "json", "run")).toBe("run.json");
    expect(specFileName("///", "yaml", "run")).toBe("run.yaml");
  });
});
