import { describe, expect, it } from "vitest";
import { getAt, issuesByPath, setAt } from "../src/features/designer/lib/specPath";
import { tracebackLine, userTraceback } from "../src/features/rewards/components/rewardTemplates";

describe("spec paths (designer forms)", () => {
  it("sets nested values immutably, and an emptied field removes its key (so the default applies)", () => {
    const spec = { name: "a", training: { learningRate: 0.1 } };
    const next = setAt(spec, "training.lora.rank", 8);
    expect(next).toEqual({ name: "a", training: { learningRate: 0.1, lora: { rank: 8 } } });
    expect(spec).toEqual({ name: "a", training: { learningRate: 0.1 } });
    expect(getAt(next, "training.lora.rank")).toBe(8);
    expect(setAt(setAt(next, "training.lora.rank", undefined), "training.learningRate", undefined)).toEqual({ name: "a" });
  });

  it("puts server (`spec.x`) and client (`x`) issues on the same field, joining two of one field", () => {
    expect(issuesByPath([{ path: "spec.name", message: "taken" }, { path: "name", message: "too long" }, { path: "trainable", message: "no" }])).toEqual({
      name: "taken; too long",
      trainable: "no",
    });
  });
});

describe("tracebackLine", () => {
  it("finds the last line of the user's code in a Python traceback, with the error", () => {
    const tb = 'Traceback (most recent call last):\n  File "/x/reward_worker.py", line 80, in main\n  File "<reward code>", line 4, in reward\n  File "<reward code>", line 2, in helper\nKeyError: \'answr\'\n';
    expect(tracebackLine(tb)).toEqual({ line: 2, message: "KeyError: 'answr'" });
    expect(tracebackLine("the reward worker ran past 12s and was killed")).toBeNull();
  });

  it("drops the worker's own frames before the user's code", () => {
    const tb = 'Traceback (most recent call last):\n  File "/x/reward_worker.py", line 93, in main\n    value = fn(**call)\n  File "<reward code>", line 2, in reward\nKeyError: \'answr\'';
    expect(userTraceback(tb)).toBe('Traceback (most recent call last):\n  File "<reward code>", line 2, in reward\nKeyError: \'answr\'');
    expect(userTraceback("MemoryError")).toBe("MemoryError");
  });
});
