import type { RunEvent } from "@troupe/contracts";
import { storeEvents } from "@troupe/db";
import superjson from "superjson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromColumns } from "../src/features/runs/lib/seriesColumns";
import { metricsQueryInput } from "../src/features/runs/lib/seriesRequest";
import type { MetricColumns } from "../src/features/runs/server/schemas";
import { prefetchRunPage } from "../src/features/runs/server/prefetchRunPage";
import { createBareRun, openServices, type TestServices } from "./helpers/services";

let services: TestServices;
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.close();
});

type DehydratedQuery = { queryKey: readonly unknown[]; state: { data: unknown; status: string } };
const pathOf = (q: DehydratedQuery) => (q.queryKey[0] as string[]).join(".");
const inputOf = (q: DehydratedQuery) => (q.queryKey[1] as { input: unknown }).input;

describe("the run page's server prefetch", () => {
  it("reads the run, its metric names and every chart's series under the keys the browser asks for", async () => {
    const runId = await createBareRun(services);
    const events: RunEvent[] = [];
    let seq = 2;
    for (let step = 1; step <= 400; step++) {
      events.push({ seq: seq++, ts: 1_700_000_000_000 + step * 1000, type: "metric", step, actor: "alice", values: { "reward/mean": step / 400, loss: 1 / step } });
    }
    await storeEvents(services.db, runId, events);

    const state = await prefetchRunPage(runId, new URLSearchParams("from=100&to=300&tab=logs"), 150, () => services.ctx);
    const queries = state.queries as unknown as DehydratedQuery[];
    expect(queries.map(pathOf).sort()).toEqual(["run.byId", "run.metricNames", "run.metrics"]);
    expect(queries.every((q) => q.state.status === "success")).toBe(true);

    const metrics = queries.find((q) => pathOf(q) === "run.metrics")!;
    // The browser's hook builds its input with the same function: the zoom from the URL, the width asked for.
    expect(inputOf(metrics)).toEqual(metricsQueryInput(runId, ["loss", "reward/mean"], 150, { from: 100, to: 300 }));
    const sent = superjson.deserialize(metrics.state.data as never) as { series: MetricColumns[] };
    const series = sent.series.map(fromColumns);
    expect(series.map((s) => s.name)).toEqual(["loss", "reward/mean"]);
    for (const s of series) {
      expect(s.points.length).toBeLessThanOrEqual(150);
      expect(s.points[0]!.step).toBeGreaterThanOrEqual(100);
      expect(s.points.at(-1)!.step).toBe(300);
      // Times travel as numbers, not Dates (no superjson path per point).
      expect(typeof s.points[0]!.ts).toBe("number");
    }
  });

  it("reads nothing for an anonymous page request: every prefetch is refused and left out", async () => {
    const runId = await createBareRun(services);
    const state = await prefetchRunPage(runId, new URLSearchParams(), 150, () => ({ ...services.ctx, auth: null }));
    expect(state.queries).toEqual([]);
  });

  it("leaves out what failed (an unknown run) without throwing, so the browser shows the error itself", async () => {
    const state = await prefetchRunPage("no-such-run", new URLSearchParams(), 276, () => services.ctx);
    expect(state.queries).toEqual([]);
  });
});
