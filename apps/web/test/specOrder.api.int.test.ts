import { DEMO_SPEC, DEMO_SPEC_INPUT, RunSpec } from "@troupe/contracts";
import { describe, expect, it } from "vitest";
import { diffSpecs } from "../src/features/compare/lib/specDiff";
import { useApiSession } from "./helpers/apiSession";
import { uniqueId } from "./helpers/services";

/**
 * A spec stored in Postgres and read back shows the order it was written in everywhere it leaves the
 * server: REST GET /runs/{id}, the run page's Spec tab (run.byId), the compare diff's rows,
 * clone-to-experiment and re-run; the schema's order for its fields, the author's for the keys of a
 * map (reward params). Real Postgres, Redis and HTTP.
 */
const api = useApiSession("spec-order-token");

/** Every object key of a value, depth first, with its path: equal lists mean equal key order everywhere. */
function keyOrder(value: unknown, path = ""): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => keyOrder(v, `${path}[${i}]`));
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => [`${path}.${k}`, ...keyOrder(v, `${path}.${k}`)]);
}

describe("stored specs keep the RunSpec's key order on the way out", () => {
  it("REST, the Spec tab, the diff, clone and re-run all show the order it was written in", async () => {
    const name = uniqueId("spec-order");
    // A map whose keys are data: jsonb would sort them (alpha, mid, zeta).
    const params = { zeta: 1, alpha: true, mid: "x" };
    const input = { ...DEMO_SPEC_INPUT, name, rewards: [{ name: "letter_match", source: { kind: "builtin", name: "letter_match", params } }] };
    const launched = await api.call("POST", "/runs", "/runs", { body: JSON.stringify(input), headers: { "content-type": "application/json" } });
    expect(launched.status).toBe(201);
    const runId = (launched.json as { id: string }).id;
    api.services.runIds.push(runId);
    await api.server.queue.remove(runId).catch(() => 0);
    const written = RunSpec.parse(input); // what was frozen on the run
    expect(Object.keys(written.rewards[0]!.source.kind === "builtin" ? written.rewards[0]!.source.params : {})).toEqual(["zeta", "alpha", "mid"]);

    // The column (json) keeps it as written.
    const [raw] = await api.services.db.$queryRaw<{ spec: unknown }[]>`SELECT "spec" FROM "Run" WHERE "id" = ${runId}`;
    expect(keyOrder(raw!.spec)).toEqual(keyOrder(written));

    const rest = await api.call("GET", `/runs/${runId}`, "/runs/{id}");
    expect(keyOrder((rest.json as { spec: unknown }).spec)).toEqual(keyOrder(written));

    const page = await api.services.caller.run.byId({ runId });
    // The Spec tab is exactly this text.
    expect(JSON.stringify(page.spec, null, 2)).toBe(JSON.stringify(written, null, 2));

    // The diff's rows follow the schema even beside a spec whose keys are sorted (a row stored by jsonb).
    const sortedKeys = JSON.parse(
      JSON.stringify(written, (_k, v: unknown) =>
        v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v,
      ),
    ) as unknown;
    const rows = diffSpecs([page.spec, sortedKeys]).map((r) => r.path);
    expect(rows.slice(0, 4)).toEqual(["specVersion", "name", "description", "seed"]);

    const clone = await api.services.caller.experiment.fromRun({ runId });
    api.services.experimentIds.push(clone.id);
    const experiment = await api.services.caller.experiment.byId({ id: clone.id });
    expect(keyOrder(experiment.spec)).toEqual(keyOrder(written));

    const again = await api.services.caller.run.rerun({ runId });
    api.services.runIds.push(again.runId);
    await api.services.ctx.runQueue.remove(again.runId).catch(() => 0);
    expect(keyOrder((await api.services.caller.run.byId({ runId: again.runId })).spec)).toEqual(keyOrder(written));
  });
});
