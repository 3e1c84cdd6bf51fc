import { ApiEpisodePage, type RunEvent } from "@troupe/contracts";
import { storeEvents } from "@troupe/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listApiEpisodes } from "../src/features/api/server/episodes";
import { createBareRun, openServices, type TestServices } from "./helpers/services";

/**
 * One query and one row mapping serve the run page (`run.episodes`), the transcript browser
 * (`run.transcripts`) and REST (`GET /runs/{id}/episodes`): the same stored episode reads the same
 * everywhere, only the time is a Date over tRPC and an ISO string over REST.
 */

let services: TestServices;
let runId: string;

beforeAll(async () => {
  services = openServices();
  runId = await createBareRun(services);
  // Runs recorded before whole groups emitted the first sample of every group first: event order is not group order.
  const events: RunEvent[] = [];
  let seq = 2;
  for (const step of [1, 2]) {
    for (const sample of [0, 1]) {
      for (const group of [0, 1, 2]) {
        events.push({
          seq: seq++,
          ts: 1_700_000_000_000 + seq,
          type: "episode",
          step,
          environment: "echo",
          group,
          sample,
          datasetRow: group * 10,
          messages: [{ actor: "student", role: "assistant", content: `g${group} s${sample} @${step}`, trained: true }],
          reward: group + sample / 10,
          rewardComponents: { letter_match: group },
          advantage: sample === 0 ? -0.5 : 0.5,
        });
      }
    }
  }
  await storeEvents(services.db, runId, events);
  // A row whose stored JSON no reader can parse: it must not break any page.
  await services.db.episode.updateMany({ where: { runId, step: 2, groupIndex: 2, sampleIndex: 1 }, data: { messages: { not: "a list" } } });
});

afterAll(async () => {
  await services.close();
});

describe("episode pages, one query for tRPC and REST", () => {
  it("run.episodes lays a step out group by group; REST pages the same episodes in event order", async () => {
    const page = await services.caller.run.episodes({ runId, step: 1, limit: 200 });
    expect(page.episodes.map((e) => [e.group, e.sample])).toEqual([
      [0, 0],
      [0, 1],
      [1, 0],
      [1, 1],
      [2, 0],
      [2, 1],
    ]);

    const seen: ApiEpisodePage["items"] = [];
    let cursor: string | undefined;
    do {
      const rest = ApiEpisodePage.parse(await listApiEpisodes(services.db, runId, { step: 1, cursor, limit: 4 }));
      seen.push(...rest.items);
      cursor = rest.nextCursor ?? undefined;
    } while (cursor);
    expect(seen.map((e) => [e.group, e.sample])).toEqual([
      [0, 0],
      [1, 0],
      [2, 0],
      [0, 1],
      [1, 1],
      [2, 1],
    ]);
    const bySeq = new Map(page.episodes.map((e) => [e.seq, e]));
    for (const e of seen) expect(e).toEqual({ ...bySeq.get(e.seq), ts: bySeq.get(e.seq)!.ts.toISOString() });
  });

  it("the transcript browser reads the same episode as the run page, and a bad stored row reads as no messages", async () => {
    const { episodes } = await services.caller.run.episodes({ runId, step: 2 });
    const { items } = await services.caller.run.transcripts({ runId, step: 2, limit: 200 });
    expect(items).toHaveLength(6);
    const bySeq = new Map(items.map((e) => [e.seq, e]));
    for (const e of episodes) expect(bySeq.get(e.seq)).toEqual(e);
    const bad = episodes.find((e) => e.group === 2 && e.sample === 1)!;
    expect(bad.messages).toEqual([]);
    expect(bad.reward).toBeCloseTo(2.1);
    expect(bad.advantage).toBe(0.5);
    expect(bad.datasetRow).toBe(20);
  });

  it("run.episodes without a step shows the latest step and the steps there are, newest first", async () => {
    const latest = await services.caller.run.episodes({ runId });
    expect(latest.step).toBe(2);
    expect(latest.recentSteps).toEqual([2, 1]);
  });
});
