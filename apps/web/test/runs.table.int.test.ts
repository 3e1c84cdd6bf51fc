import type { RunEvent } from "@troupe/contracts";
import { storeEvents } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openServices, uniqueId, type TestServices } from "./helpers/services";

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.close();
});

describe("run.table, run.transcripts, run.rerun", () => {
  it("filters by status, tag and source, searches by name, sorts and pages on the server", async () => {
    const tag = uniqueId("tag");
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const id = uniqueId("table-run");
      ids.push(id);
      services.runIds.push(id);
      await services.db.run.create({
        data: {
          id,
          name: `${tag} run ${i}`,
          spec: {},
          specVersion: 1,
          seed: i,
          status: i % 2 === 0 ? "succeeded" : "failed",
          source: i < 2 ? "api" : "ui",
          tags: [tag, ...(i === 3 ? ["special"] : [])],
          lastStep: 10 * i,
          createdAt: new Date(1_700_000_000_000 + i * 1000),
        },
      });
    }
    const metrics: RunEvent[] = [
      { seq: 1, ts: 1, type: "metric", step: 1, actor: "alice", values: { "reward/mean": 0.1, loss: 2 } },
      { seq: 2, ts: 2, type: "metric", step: 2, actor: "alice", values: { "reward/mean": 0.3 } },
      { seq: 3, ts: 2, type: "metric", step: 2, actor: "bob", values: { "reward/mean": -1 } },
      { seq: 4, ts: 3, type: "memory", step: 2, phase: "update", device: "cpu", rssBytes: 5e8 },
      { seq: 5, ts: 3, type: "memory", step: 2, phase: "update", device: "cuda:0", allocatedBytes: 7e9, peakBytes: 9e9 },
    ];
    await storeEvents(services.db, ids[6]!, metrics);

    const all = await services.caller.run.table({ tag, pageSize: 3, sort: "createdAt", dir: "desc" });
    expect(all.total).toBe(7);
    expect(all.items.map((r) => r.id)).toEqual([ids[6], ids[5], ids[4]]);
    expect(all.tags).toContain(tag);
    expect(all.items[0]).toMatchObject({
      keyMetrics: { "reward/mean": { alice: 0.3, bob: -1 }, loss: { alice: 2 } },
      peakRssBytes: 5e8,
      peakDeviceBytes: 9e9,
      lastReward: 0.3,
      source: "ui",
    });
    const page3 = await services.caller.run.table({ tag, pageSize: 3, page: 3 });
    expect(page3.items.map((r) => r.id)).toEqual([ids[0]]);

    const failed = await services.caller.run.table({ tag, status: ["failed"], sort: "lastStep", dir: "asc" });
    expect(failed.items.map((r) => r.lastStep)).toEqual([10, 30, 50]);
    expect((await services.caller.run.table({ tag, source: "api" })).items.map((r) => r.id).sort()).toEqual([ids[0], ids[1]].sort());
    expect((await services.caller.run.table({ tag: "special", q: tag })).items.map((r) => r.id)).toEqual([ids[3]]);
    expect((await services.caller.run.table({ q: `${tag.toUpperCase()} RUN 5` })).items.map((r) => r.id)).toEqual([ids[5]]);
    expect((await services.caller.run.table({ q: ids[2] })).items.map((r) => r.id)).toEqual([ids[2]]);
  });

  it("filters transcripts by actor, reward range, text and dataset row, pages with a keyset cursor, keeps HTML as text", async () => {
    const runId = uniqueId("transcripts-run");
    services.runIds.push(runId);
    await services.db.run.create({ data: { id: runId, name: "t", spec: {}, specVersion: 1, seed: 0, status: "running" } });
    const events: RunEvent[] = [];
    let seq = 1;
    for (let step = 1; step <= 5; step++) {
      for (let group = 0; group < 3; group++) {
        events.push({
          seq: seq++,
          ts: step,
          type: "episode",
          step,
          environment: group === 2 ? "debate" : "echo",
          group,
          sample: 0,
          datasetRow: group,
          messages: [
            { actor: "alice", role: "user", content: `prompt ${group}`, trained: false },
            { actor: group === 1 ? "bob" : "alice", role: "assistant", content: group === 0 ? `<script>alert(${step})</script>` : "plain", trained: true },
          ],
          reward: step / 10,
          rewardComponents: { match: step / 10 },
          advantage: 0,
        });
      }
    }
    await storeEvents(services.db, runId, events);

    const bob = await services.caller.run.transcripts({ runId, actor: "bob" });
    expect(bob.items.map((e) => [e.step, e.group])).toEqual([[5, 1], [4, 1], [3, 1], [2, 1], [1, 1]]);
    const range = await services.caller.run.transcripts({ runId, minReward: 0.2, maxReward: 0.3 });
    expect(range.items.map((e) => e.step)).toEqual([3, 3, 3, 2, 2, 2]);
    const text = await services.caller.run.transcripts({ runId, q: "<SCRIPT>alert(4" });
    expect(text.items.map((e) => e.seq)).toEqual([10]);
    expect(text.items[0]!.messages[1]!.content).toBe("<script>alert(4)</script>");
    const row = await services.caller.run.transcripts({ runId, datasetRow: 2, environment: "debate" });
    expect(row.items.map((e) => e.step)).toEqual([5, 4, 3, 2, 1]);
    expect(await services.caller.run.transcripts({ runId, q: "100%_" })).toMatchObject({ items: [] });

    // Pages of 4 walk all 15 in order, each once.
    const seen: number[] = [];
    let cursor: { step: number; seq: number } | null = null;
    do {
      const page: Awaited<ReturnType<typeof services.caller.run.transcripts>> = await services.caller.run.transcripts({ runId, limit: 4, cursor });
      seen.push(...page.items.map((e) => e.seq));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([13, 14, 15, 10, 11, 12, 7, 8, 9, 4, 5, 6, 1, 2, 3]);
    expect(await services.caller.run.episodeSteps({ runId })).toEqual({ steps: [5, 4, 3, 2, 1], actors: ["alice", "bob"] });
  });

  it("gives each page's GRPO groups with every sample's reward and advantage, whatever the filter matched", async () => {
    const runId = uniqueId("transcript-groups-run");
    services.runIds.push(runId);
    await services.db.run.create({ data: { id: runId, name: "t", spec: {}, specVersion: 1, seed: 0, status: "running" } });
    const events: RunEvent[] = [];
    let seq = 1;
    // Step 1: group 0 of "echo" all scored 1 (advantage 0), group 0 of "debate" scored 0 and 1.
    for (const [environment, rewards] of [["echo", [1, 1, 1]], ["debate", [0, 1]]] as const) {
      rewards.forEach((reward, sample) => {
        events.push({
          seq: seq++,
          ts: seq,
          type: "episode",
          step: 1,
          environment,
          group: 0,
          sample,
          datasetRow: 3,
          messages: [
            { actor: "letters", role: "user", content: "say a:", trained: false },
            { actor: "student", role: "assistant", content: sample === 1 ? "needle" : "a", trained: true },
          ],
          reward,
          rewardComponents: {},
          advantage: environment === "echo" ? 0 : reward - 0.5,
        });
      });
    }
    await storeEvents(services.db, runId, events);

    // The text matches one sample of each group; the groups come whole.
    const page = await services.caller.run.transcripts({ runId, q: "needle" });
    expect(page.items.map((e) => [e.environment, e.sample])).toEqual([["echo", 1], ["debate", 1]]);
    const byEnv = Object.fromEntries(page.groups.map((g) => [g.environment, g]));
    expect(page.groups).toHaveLength(2);
    expect(byEnv.echo).toMatchObject({ step: 1, group: 0 });
    expect(byEnv.echo!.samples.map((s) => [s.sample, s.reward, s.advantage])).toEqual([[0, 1, 0], [1, 1, 0], [2, 1, 0]]);
    expect(byEnv.debate!.samples.map((s) => [s.sample, s.reward, s.advantage])).toEqual([[0, 0, -0.5], [1, 1, 0.5]]);
    expect(await services.caller.run.transcripts({ runId, q: "nothing like it" })).toMatchObject({ items: [], groups: [] });
    // The prompt's `actor` is its dataset: not listed among the actors that speak.
    expect((await services.caller.run.episodeSteps({ runId })).actors).toEqual(["student"]);
  });

  it("re-runs a run with its frozen spec as a new queued run", async () => {
    const { DEMO_SPEC } = await import("@troupe/contracts");
    const id = uniqueId("rerun-src");
    services.runIds.push(id);
    await services.db.run.create({ data: { id, name: "src", spec: DEMO_SPEC as object, specVersion: 1, seed: DEMO_SPEC.seed, status: "succeeded", priority: 7 } });
    const { runId } = await services.caller.run.rerun({ runId: id });
    services.runIds.push(runId);
    const copy = await services.caller.run.byId({ runId });
    expect(copy.status).toBe("queued");
    expect(copy.spec).toEqual(DEMO_SPEC);
    expect(copy.priority).toBe(7);
    expect(await services.queue.getJob(runId)).toBeTruthy();

    const bad = uniqueId("rerun-bad");
    services.runIds.push(bad);
    await services.db.run.create({ data: { id: bad, name: "bad", spec: { specVersion: 1 }, specVersion: 1, seed: 0, status: "failed" } });
    await expect(services.caller.run.rerun({ runId: bad })).rejects.toThrow(/cannot run.*actors/);
  });
});
