import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBareRun, openServices, type TestServices } from "./helpers/services";

/** The runs table's search finds a run by the id people have at hand: a prefix, or the short id legends show. */

let services: TestServices;
let id: string;
beforeAll(async () => {
  services = openServices();
  id = await createBareRun(services);
});
afterAll(async () => {
  await services.close();
});

const found = async (q: string) => (await services.caller.run.table({ q, pageSize: 200 })).items.map((r) => r.id);

describe("run.table search", () => {
  it("matches the whole id, a prefix of it, and the short id (#last5) of legends", async () => {
    expect(await found(id)).toContain(id);
    expect(await found(id.slice(0, id.length - 4))).toContain(id);
    expect(await found(`#${id.slice(-5)}`)).toEqual([id]);
    expect(await found(id.slice(-5))).toContain(id);
  });

  it("does not match an id by one or two characters", async () => {
    expect(await found(id.slice(-2))).not.toContain(id);
  });
});
