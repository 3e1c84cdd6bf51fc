import { describe, expect, it } from "vitest";
import { queuedRunOrder, runJobId, runJobOptions, runJobPriority } from "../src/queue";

describe("run jobs", () => {
  it("name each attempt's job after the run, so adding it twice is a no-op", () => {
    expect(runJobId("r1", 0)).toBe("r1");
    expect(runJobId("r1", 1)).toBe("r1-attempt-2");
    expect(runJobOptions({ id: "r1", priority: 0, attempt: 2 }).jobId).toBe("r1-attempt-3");
  });

  it("order by priority, then a run that ran before (handed back by a deploy, resumed) ahead of new ones, then first come", () => {
    const at = (minute: number) => new Date(Date.UTC(2026, 10, 27, 10, minute));
    const runs = [
      { id: "new-early", priority: 0, attempt: 0, createdAt: at(1) },
      { id: "urgent", priority: 50, attempt: 0, createdAt: at(9) },
      { id: "handed-back", priority: 0, attempt: 1, createdAt: at(5) },
      { id: "new-late", priority: 0, attempt: 0, createdAt: at(7) },
    ];
    expect([...runs].sort(queuedRunOrder).map((r) => r.id)).toEqual(["urgent", "handed-back", "new-early", "new-late"]);
    // BullMQ runs the lowest number first and keeps insertion order within one: the same order, whatever was added last.
    expect(runJobPriority({ priority: 100, attempt: 0 })).toBeGreaterThanOrEqual(1);
    expect(runJobPriority({ priority: 50, attempt: 0 })).toBeLessThan(runJobPriority({ priority: 0, attempt: 1 }));
    expect(runJobPriority({ priority: 0, attempt: 1 })).toBeLessThan(runJobPriority({ priority: 0, attempt: 0 }));
    expect(runJobPriority({ priority: 1, attempt: 0 })).toBeLessThan(runJobPriority({ priority: 0, attempt: 5 }));
  });
});
