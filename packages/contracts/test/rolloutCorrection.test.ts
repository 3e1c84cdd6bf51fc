import { describe, expect, it } from "vitest";
import { RunSpec, fieldIssues } from "../src/index";
import { DEMO_SPEC_INPUT } from "../src/demo";

/** algorithm.importanceCorrection (truncated importance sampling), through RunSpec. */
function parse(algorithm: Record<string, unknown>) {
  return RunSpec.safeParse({ ...DEMO_SPEC_INPUT, algorithm: { ...DEMO_SPEC_INPUT.algorithm, ...algorithm } });
}

function issues(algorithm: Record<string, unknown>) {
  const parsed = parse(algorithm);
  return parsed.success ? [] : fieldIssues(parsed.error);
}

describe("algorithm.importanceCorrection", () => {
  it("is absent by default, and tis fills its cap", () => {
    const plain = parse({});
    expect(plain.success && plain.data.algorithm.importanceCorrection).toBeUndefined();
    const tis = parse({ importanceCorrection: { kind: "tis" } });
    expect(tis.success && tis.data.algorithm.importanceCorrection).toEqual({ kind: "tis", cap: 2 });
    expect(issues({ importanceCorrection: { kind: "tis", cap: 1 } })).toEqual([]);
  });

  it("refuses a cap below 1, naming the field", () => {
    const found = issues({ importanceCorrection: { kind: "tis", cap: 0.5 } });
    expect(found.map((i) => i.path)).toEqual(["algorithm.importanceCorrection.cap"]);
    expect(found[0]!.message).toMatch(/at least 1/);
  });

  it("refuses a cap that is not a finite number, and an unknown kind", () => {
    expect(issues({ importanceCorrection: { kind: "tis", cap: "3" } }).map((i) => i.path)).toEqual(["algorithm.importanceCorrection.cap"]);
    expect(issues({ importanceCorrection: { kind: "tis", cap: Number.POSITIVE_INFINITY } }).map((i) => i.path)).toEqual([
      "algorithm.importanceCorrection.cap",
    ]);
    expect(issues({ importanceCorrection: { kind: "mis", cap: 2 } }).map((i) => i.path)).toEqual(["algorithm.importanceCorrection.kind"]);
  });
});
