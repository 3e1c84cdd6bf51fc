import { DEMO_SPEC, DEMO_SPEC_INPUT, RunSpec } from "@troupe/contracts";
import { describe, expect, it } from "vitest";
import { diffSpecs } from "../src/features/compare/lib/specDiff";
import { useApiSession } from "./helpers/apiSession";
import { uniqueId } from "./helpers/services";

/**
 * A spec stored in Postgres (jsonb: keys reordered) and read back shows the RunSpec's key order
 * everywhere it leaves the server: REST GET /runs/{id}, the run page's Spec tab (run.byId), the
 * compare diff's rows, clone-to-experiment and re-run. Real Postgres, Redis and HTTP.
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
    const launched = await api.call("POST", "/runs", "/runs", { body: JSON.stringify({ ...DEMO_SPEC_INPUT, name }), headers: { "content-type": "application/json" } });
    expect(launched.status).toBe(201);
    const runId = (launched.json as { id: string }).id;
    api.services.runIds.push(runId);
    await api.server.queue.remove(runId).catch(() => 0);
    const written = RunSpec.parse({ ...DEMO_SPEC_INPUT, name }); // what was frozen on the run
    expect(keyOrder(written)).toEqual(keyOrder({ ...DEMO_SPEC, name }));

    // Postgres itself does not keep it.
    const [raw] = await api.services.db.$queryRaw<{ spec: unknown }[]>`SELECT "spec" FROM "Run" WHERE "id" = ${runId}`;
    expect(keyOrder(raw!.spec)).not.toEqual(keyOrder(written));

    const rest = await api.call("GET", `/runs/${runId}`, "/runs/{id}");
    expect(keyOrder((rest.json as { spec: unknown }).spec)).toEqual(keyOrder(written));

    const page = await api.services.caller.run.byId({ runId });
    // The Spec tab is exactly this text.
    expect(JSON.stringify(page.spec, null, 2)).toBe(JSON.stringify(written, null, 2));

    const rows = diffSpecs([page.spec, raw!.spec]).map((r) => r.path);
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
