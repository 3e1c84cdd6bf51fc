import { describe, expect, it } from "vitest";
import { LiveRunData } from "../src/features/live/liveRunData";

describe("LiveRunData.metricVersion", () => {
  it("moves on batches with a metric event only, so memory and episode events do not redraw the metric charts", () => {
    const live = new LiveRunData();
    expect(live.apply([{ seq: 1, ts: 1, type: "memory", step: 1, phase: "rollout", device: "cpu", rssBytes: 1e9 }])).toBe(true);
    expect(live.metricVersion).toBe(0);
    live.apply([
      { seq: 2, ts: 2, type: "metric", step: 1, actor: "alice", values: { "reward/mean": 0.5, loss: 1 } },
      { seq: 3, ts: 2, type: "metric", step: 1, actor: "bob", values: { "reward/mean": 0.1 } },
    ]);
    expect(live.metricVersion).toBe(1);
    live.apply([
      {
        seq: 4,
        ts: 3,
        type: "episode",
        step: 1,
        environment: "echo",
        group: 0,
        sample: 0,
        messages: [{ actor: "alice", role: "assistant", content: "a", trained: true }],
        reward: 1,
        rewardComponents: {},
      },
    ]);
    expect(live.metricVersion).toBe(1);
    live.apply([{ seq: 5, ts: 4, type: "metric", step: 2, actor: "alice", values: { "reward/mean": 0.7 } }]);
    expect(live.metricVersion).toBe(2);
    expect(live.metrics.get("reward/mean\u0000alice")?.get(2)).toBe(0.7);
  });
});
