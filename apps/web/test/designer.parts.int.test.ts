import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FieldValidationError } from "../src/server/api/trpc";
import { openServices, uniqueId, type TestServices } from "./helpers/services";
import { rejectionOf } from "./helpers/rejection";

let services: TestServices;
const partIds: string[] = [];
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.db.designPart.deleteMany({ where: { id: { in: partIds } } });
  await services.close();
});

function issuesOf(error: TRPCError) {
  expect(error.cause).toBeInstanceOf(FieldValidationError);
  return (error.cause as FieldValidationError).issues;
}

const name = () => uniqueId("actor").replace(/-/g, "_");

describe("part router (real Postgres)", () => {
  it("creates, reads, lists, updates, duplicates and deletes an actor, storing the spec as written", async () => {
    const actorName = name();
    const spec = { name: actorName, model: { source: "tiny" }, training: { learningRate: 0.002 } };
    const created = await services.caller.part.create({ kind: "actor", spec, description: "student" });
    partIds.push(created.id);
    expect(created).toMatchObject({ kind: "actor", name: actorName, description: "student", spec });
    // Stored as written: defaults are not filled in, so a later default change reaches the part.
    const row = await services.db.designPart.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.spec).toEqual(spec);

    expect(await services.caller.part.get({ id: created.id })).toEqual(created);
    const listed = await services.caller.part.list({ kind: "actor" });
    expect(listed.items.map((p) => p.id)).toContain(created.id);
    expect((await services.caller.part.list({ kind: "reward" })).items.map((p) => p.id)).not.toContain(created.id);

    const renamed = name();
    const updated = await services.caller.part.update({ id: created.id, spec: { ...spec, name: renamed, trainable: false } });
    expect(updated.name).toBe(renamed);
    expect(updated.spec).toMatchObject({ trainable: false });
    expect(updated.description).toBe("student");

    const copy = await services.caller.part.duplicate({ id: created.id });
    partIds.push(copy.id);
    expect(copy.name).toBe(`${renamed}_copy`);
    expect(copy.spec).toEqual({ ...updated.spec, name: `${renamed}_copy` });
    const copy2 = await services.caller.part.duplicate({ id: created.id });
    partIds.push(copy2.id);
    expect(copy2.name).toBe(`${renamed}_copy2`);

    expect(await services.caller.part.delete({ id: copy.id })).toEqual({ id: copy.id, deleted: true });
    expect(await services.db.designPart.count({ where: { id: copy.id } })).toBe(0);
    expect((await rejectionOf(services.caller.part.delete({ id: copy.id }))).code).toBe("NOT_FOUND");
    expect((await rejectionOf(services.caller.part.get({ id: "nope" }))).code).toBe("NOT_FOUND");
  });

  it("refuses an invalid fragment with the field path of each problem and stores nothing", async () => {
    const actorName = name();
    const before = await services.db.designPart.count();
    const error = await rejectionOf(
      services.caller.part.create({
        kind: "actor",
        spec: { name: actorName, model: { source: "tiny" }, backend: "openai", api: { baseUrl: "http://x/v1", model: "m" }, trainable: true },
      }),
    );
    expect(error.code).toBe("BAD_REQUEST");
    expect(issuesOf(error)).toContainEqual({ path: "spec.trainable", message: expect.stringContaining("cannot be trained") });
    const typo = await rejectionOf(services.caller.part.create({ kind: "actor", spec: { name: actorName, model: { source: "tiny" }, training: { learningRate: -1 } } }));
    expect(issuesOf(typo).map((i) => i.path)).toEqual(["spec.training.learningRate"]);
    expect(await services.db.designPart.count()).toBe(before);
  });

  it("validates each kind with its own contracts schema", async () => {
    const rewardName = name();
    const reward = await services.caller.part.create({
      kind: "reward",
      spec: { name: rewardName, source: { kind: "python", code: "def reward(prompt, completion, **row):\n    return 1.0\n" } },
    });
    partIds.push(reward.id);
    expect(reward.kind).toBe("reward");
    const bad = await rejectionOf(services.caller.part.create({ kind: "reward", spec: { name: name(), source: { kind: "python", code: "" } } }));
    expect(issuesOf(bad).map((i) => i.path)).toEqual(["spec.source.code"]);
    // An actor fragment is not an environment.
    const wrongKind = await rejectionOf(services.caller.part.create({ kind: "environment", spec: { name: name(), model: { source: "tiny" } } }));
    // (An environment may list no rewards: code, python, game, remote and offline learners need none.)
    expect(issuesOf(wrongKind).map((i) => i.path)).toEqual(expect.arrayContaining(["spec.dataset", "spec.actors"]));
    expect(issuesOf(wrongKind)).toContainEqual({ path: "spec", message: "is not a known field: model" });
  });

  it("refuses a second part of one kind and name with CONFLICT on spec.name; another kind may share it", async () => {
    const shared = name();
    const first = await services.caller.part.create({ kind: "actor", spec: { name: shared, model: { source: "tiny" } } });
    partIds.push(first.id);
    const error = await rejectionOf(services.caller.part.create({ kind: "actor", spec: { name: shared, model: { source: "tiny" } } }));
    expect(error.code).toBe("CONFLICT");
    expect(issuesOf(error)).toEqual([{ path: "spec.name", message: `an actor named "${shared}" already exists` }]);
    const reward = await services.caller.part.create({ kind: "reward", spec: { name: shared, source: { kind: "builtin", name: "exact_match" } } });
    partIds.push(reward.id);
    // Renaming another actor onto the taken name is refused the same way.
    const other = await services.caller.part.create({ kind: "actor", spec: { name: name(), model: { source: "tiny" } } });
    partIds.push(other.id);
    const clash = await rejectionOf(services.caller.part.update({ id: other.id, spec: { name: shared, model: { source: "tiny" } } }));
    expect(clash.code).toBe("CONFLICT");
  });
});
