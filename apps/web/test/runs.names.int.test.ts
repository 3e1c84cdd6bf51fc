import { DEMO_SPEC_INPUT } from "@troupe/contracts";
import { describe, expect, it } from "vitest";
import { useApiSession } from "./helpers/apiSession";
import { createExperiment, uniqueId } from "./helpers/services";

/**
 * Readable run names (`brisk-otter-17`): drawn by Postgres when a run row is inserted
 * (`troupe_run_name()`, migration run_display_names), unique, shown as `name` by tRPC and REST beside
 * the spec's own `specName`, and found by the runs table's search.
 */

const api = useApiSession("names-token");
const READABLE = /^[a-z]+-[a-z]+-\d+$/;

/** Draws `troupe_run_name()` after `setseed(seed)`, on one connection (the seed is per session). */
async function drawAfterSeed(seed: number, times = 1): Promise<string[]> {
  return api.services.db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT setseed(${seed}::float8)::text`;
    const names: string[] = [];
    for (let i = 0; i < times; i++) names.push((await tx.$queryRaw<{ name: string }[]>`SELECT troupe_run_name() AS name`)[0]!.name);
    return names;
  });
}

describe("generated run names", () => {
  it("every run gets a readable adjective-noun-number name, different from every other run's", async () => {
    const ids = Array.from({ length: 200 }, () => uniqueId("named-run"));
    // A bare insert that says nothing of a name: the column's default draws it.
    await api.services.db.run.createMany({ data: ids.map((id) => ({ id, name: "same spec", spec: {}, specVersion: 1, seed: 0, status: "succeeded" as const })) });
    api.services.runIds.push(...ids);
    const rows = await api.services.db.run.findMany({ where: { id: { in: ids } }, select: { displayName: true } });
    expect(rows).toHaveLength(200);
    for (const r of rows) expect(r.displayName).toMatch(READABLE);
    expect(new Set(rows.map((r) => r.displayName)).size).toBe(200);
    const all = await api.services.db.run.findMany({ select: { displayName: true } });
    expect(new Set(all.map((r) => r.displayName)).size).toBe(all.length);
  });

  it("is repeatable under a seed, and draws again rather than reuse a taken name", async () => {
    const [first, following] = await drawAfterSeed(0.125, 2);
    expect(await drawAfterSeed(0.125)).toEqual([first]);
    // Taken by a run: the same seed now gives another name, the one drawn next.
    const id = uniqueId("taken-name-run");
    await api.services.db.run.create({ data: { id, name: "x", displayName: first!, spec: {}, specVersion: 1, seed: 0, status: "succeeded" } });
    api.services.runIds.push(id);
    const [second] = await drawAfterSeed(0.125);
    expect(second).not.toBe(first);
    expect(second).toMatch(READABLE);
    expect(second).toBe(following);
    // The unique index backs it: a name given twice by hand is refused.
    await expect(
      api.services.db.run.create({ data: { id: uniqueId("dup"), name: "x", displayName: first!, spec: {}, specVersion: 1, seed: 0 } }),
    ).rejects.toMatchObject({ code: "P2002" });
  });

  it("launches from the UI and from REST each get their own name; the spec's name is kept as specName", async () => {
    const experimentId = await createExperiment(api.services);
    const { runId: uiRun } = await api.services.caller.experiment.launch({ experimentId });
    const { runId: rerun } = await api.services.caller.run.rerun({ runId: uiRun });
    const specName = uniqueId("named-spec");
    const created = await api.call("POST", "/runs", "/runs", { body: JSON.stringify({ ...DEMO_SPEC_INPUT, name: specName }), headers: { "content-type": "application/json" } });
    expect(created.status).toBe(201);
    const restRun = created.json as { id: string; name: string; specName: string };
    api.services.runIds.push(restRun.id, rerun);
    await api.server.queue.remove(restRun.id).catch(() => 0);

    expect(restRun.name).toMatch(READABLE);
    expect(restRun.specName).toBe(specName);
    const ui = await api.services.caller.run.byId({ runId: uiRun });
    const again = await api.services.caller.run.byId({ runId: rerun });
    expect(ui.name).toMatch(READABLE);
    expect(again.name).toMatch(READABLE);
    // A re-run has its spec's name, and a name of its own.
    expect(again.specName).toBe(ui.specName);
    expect(new Set([ui.name, again.name, restRun.name]).size).toBe(3);

    // The same name wherever the run is listed: REST list and run, the runs table, the recent runs.
    const rest = await api.call("GET", `/runs/${uiRun}`, "/runs/{id}");
    expect(rest.json).toMatchObject({ id: uiRun, name: ui.name, specName: ui.specName });
    const listed = await api.call("GET", `/runs?experimentId=${experimentId}&limit=10`, "/runs");
    expect((listed.json as { items: { id: string; name: string }[] }).items.map((r) => r.name).sort()).toEqual([ui.name, again.name].sort());
    const table = await api.services.caller.run.table({ experimentId });
    expect(table.items.map((r) => r.name).sort()).toEqual([ui.name, again.name].sort());
    const recent = await api.services.caller.run.list({ experimentId, limit: 10 });
    expect(recent.items.map((r) => r.name).sort()).toEqual([ui.name, again.name].sort());
  });
});

describe("run search by name", () => {
  it("finds a run by its whole name, a part of it, in any case; and still by its spec's name", async () => {
    const id = uniqueId("search-name-run");
    const specName = uniqueId("search-spec");
    await api.services.db.run.create({ data: { id, name: specName, spec: {}, specVersion: 1, seed: 0, status: "succeeded" } });
    api.services.runIds.push(id);
    const { displayName } = await api.services.db.run.findUniqueOrThrow({ where: { id }, select: { displayName: true } });
    const found = async (q: string) => (await api.services.caller.run.table({ q, pageSize: 200 })).items.map((r) => r.id);

    expect(await found(displayName)).toEqual([id]);
    expect(await found(displayName.toUpperCase())).toEqual([id]);
    const nounAndNumber = displayName.split("-").slice(1).join("-"); // "otter-17"
    expect(await found(nounAndNumber)).toContain(id);
    expect(await found(specName)).toEqual([id]);
    expect(await found(`${displayName}-nope`)).not.toContain(id);
  });

  it("sorts the table's run column by the run's name", async () => {
    const tag = uniqueId("sort-tag");
    const ids = [uniqueId("s1"), uniqueId("s2"), uniqueId("s3")];
    await api.services.db.run.createMany({ data: ids.map((id) => ({ id, name: "one spec", spec: {}, specVersion: 1, seed: 0, status: "succeeded" as const, tags: [tag] })) });
    api.services.runIds.push(...ids);
    const page = await api.services.caller.run.table({ tag, sort: "name", dir: "asc" });
    const names = page.items.map((r) => r.name);
    expect(names).toHaveLength(3);
    expect(names).toEqual([...names].sort());
  });
});
