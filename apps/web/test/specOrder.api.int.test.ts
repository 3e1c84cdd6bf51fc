import { DEMO_SPEC, DEMO_SPEC_INPUT, RunSpec } from "@troupe/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiToken } from "../src/features/tokens/server/tokens";
import { diffSpecs } from "../src/features/compare/lib/specDiff";
import { startApiServer, type ApiServer } from "./helpers/apiServer";
import { apiCaller, OpenApiChecker } from "./helpers/openapi";
import { openServices, uniqueId, type TestServices } from "./helpers/services";

/**
 * A spec stored in Postgres (jsonb: keys reordered) and read back shows the RunSpec's key order
 * everywhere it leaves the server: REST GET /runs/{id}, the run page's Spec tab (run.byId), the
 * compare diff's rows, clone-to-experiment and re-run. Real Postgres, Redis and HTTP.
 */
let services: TestServices;
let server: ApiServer;
let call: ReturnType<typeof apiCaller>;
const tokenIds: string[] = [];

beforeAll(async () => {
  services = openServices();
  server = await startApiServer({ isolateQueue: true });
  const created = await createApiToken(services.db, uniqueId("spec-order-token"));
  tokenIds.push(created.record.id);
  call = apiCaller(server.baseUrl, await OpenApiChecker.load(server.baseUrl), created.token);
});

afterAll(async () => {
  await server?.close();
  await services.db.apiToken.deleteMany({ where: { id: { in: tokenIds } } });
  await services?.close();
});

/** Every object key of a value, depth first, with its path: equal lists mean equal key order everywhere. */
function keyOrder(value: unknown, path = ""): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => keyOrder(v, `${path}[${i}]`));
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => [`${path}.${k}`, ...keyOrder(v, `${path}.${k}`)]);
}

describe("stored specs keep the RunSpec's key order on the way out", () => {
  it("REST, the Spec tab, the diff, clone and re-run all show the order it was written in", async () => {
    const name = uniqueId("spec-order");
    const launched = await call("POST", "/runs", "/runs", { body: JSON.stringify({ ...DEMO_SPEC_INPUT, name }), headers: { "content-type": "application/json" } });
    expect(launched.status).toBe(201);
    const runId = (launched.json as { id: string }).id;
    services.runIds.push(runId);
    await server.queue.remove(runId).catch(() => 0);
    const written = RunSpec.parse({ ...DEMO_SPEC_INPUT, name }); // what was frozen on the run
    expect(keyOrder(written)).toEqual(keyOrder({ ...DEMO_SPEC, name }));

    // Postgres itself does not keep it.
    const [raw] = await services.db.$queryRaw<{ spec: unknown }[]>`SELECT "spec" FROM "Run" WHERE "id" = ${runId}`;
    expect(keyOrder(raw!.spec)).not.toEqual(keyOrder(written));

    const rest = await call("GET", `/runs/${runId}`, "/runs/{id}");
    expect(keyOrder((rest.json as { spec: unknown }).spec)).toEqual(keyOrder(written));

    const page = await services.caller.run.byId({ runId });
    // The Spec tab is exactly this text.
    expect(JSON.stringify(page.spec, null, 2)).toBe(JSON.stringify(written, null, 2));

    const rows = diffSpecs([page.spec, raw!.spec]).map((r) => r.path);
    expect(rows.slice(0, 4)).toEqual(["specVersion", "name", "description", "seed"]);

    const clone = await services.caller.experiment.fromRun({ runId });
    services.experimentIds.push(clone.id);
    const experiment = await services.caller.experiment.byId({ id: clone.id });
    expect(keyOrder(experiment.spec)).toEqual(keyOrder(written));

    const again = await services.caller.run.rerun({ runId });
    services.runIds.push(again.runId);
    await services.ctx.runQueue.remove(again.runId).catch(() => 0);
    expect(keyOrder((await services.caller.run.byId({ runId: again.runId })).spec)).toEqual(keyOrder(written));
  });
});
