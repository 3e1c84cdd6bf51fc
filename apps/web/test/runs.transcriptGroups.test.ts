import { describe, expect, it } from "vitest";
import { groupKey, groupStats, transcriptRows, type TranscriptGroup } from "../src/features/runs/lib/transcriptGroups";

const ep = (seq: number, step: number, group: number, environment = "echo") => ({ seq, step, group, environment, sample: seq % 4 });

/** The transcript list groups episodes by (step, environment, group) under a header with the group's stats. */
describe("groupStats", () => {
  it("gives the mean and the Bessel-corrected std the advantages divide by", () => {
    const { n, mean, std } = groupStats([1, 0, 1, 0]);
    expect(n).toBe(4);
    expect(mean).toBe(0.5);
    expect(std).toBeCloseTo(Math.sqrt(1 / 3), 12); // sum of squares 1, over n - 1 = 3
  });
  it("a group that all scored the same has std 0 (every advantage 0); one sample has std 0", () => {
    expect(groupStats([1, 1, 1, 1])).toEqual({ n: 4, mean: 1, std: 0 });
    expect(groupStats([0.25])).toEqual({ n: 1, mean: 0.25, std: 0 });
    expect(groupStats([]).n).toBe(0);
  });
});

describe("transcriptRows", () => {
  const g = (step: number, group: number, environment = "echo"): TranscriptGroup => ({
    step,
    environment,
    group,
    samples: [0, 1].map((sample) => ({ seq: 100 * step + 10 * group + sample, sample, reward: sample, advantage: sample - 0.5 })),
  });

  it("puts a header before each group's episodes, keyed by (step, environment, group), with its samples", () => {
    const groups = new Map([g(2, 0), g(2, 1), g(1, 0)].map((x) => [groupKey(x), x]));
    const rows = transcriptRows([ep(1, 2, 0), ep(2, 2, 0), ep(3, 2, 1), ep(4, 2, 1, "reverse"), ep(5, 1, 0)], groups);
    expect(rows.map((r) => (r.kind === "group" ? `H ${r.id.step}/${r.id.environment}/${r.id.group}` : `e${r.episode.seq}`))).toEqual([
      "H 2/echo/0",
      "e1",
      "e2",
      "H 2/echo/1",
      "e3",
      "H 2/reverse/1",
      "e4",
      "H 1/echo/0",
      "e5",
    ]);
    const first = rows[0]!;
    expect(first.kind === "group" && first.group).toEqual(g(2, 0));
    // Not known yet (another page's): the header waits for it.
    const reverse = rows[5]!;
    expect(reverse.kind === "group" && reverse.group).toBeNull();
  });

  it("a group split by others gets a header at each run, with distinct keys", () => {
    const rows = transcriptRows([ep(1, 1, 0), ep(2, 1, 1), ep(3, 1, 0)], new Map());
    const headers = rows.filter((r) => r.kind === "group");
    expect(headers).toHaveLength(3);
    expect(new Set(headers.map((h) => h.kind === "group" && h.key)).size).toBe(3);
  });
});
