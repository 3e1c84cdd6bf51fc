import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FieldValidationError } from "../src/server/api/trpc";
import { DEMO_SPEC_INPUT } from "@troupe/contracts";
import { createExperiment, openServices, uniqueId, type TestServices } from "./helpers/services";
import { rejectionOf } from "./helpers/rejection";

let services: TestServices;
const names: string[] = [];
beforeAll(() => {
  services = openServices();
});
afterAll(async () => {
  await services.db.dataset.deleteMany({ where: { name: { in: names } } });
  await services.close();
});

const freshName = () => {
  const n = uniqueId("ds").replace(/-/g, "_");
  names.push(n);
  return n;
};
const b64 = (text: string | Buffer) => Buffer.from(text).toString("base64");

describe("dataset router (real Postgres)", () => {
  it("uploads JSONL with column types and a preview, and hands out a `stored` RunSpec source", async () => {
    const name = freshName();
    const jsonl = '{"prompt":"say a:","answer":"a","n":1}\n\n{"prompt":"say b:","answer":"b","n":2.5,"tags":["x"]}\n';
    const ds = await services.caller.dataset.upload({ name, format: "jsonl", contentBase64: b64(jsonl), evalFraction: 0.25 });
    expect(ds).toMatchObject({
      name,
      kind: "upload",
      format: "jsonl",
      rowCount: 2,
      columns: ["prompt", "answer", "n", "tags"],
      columnTypes: { prompt: "string", answer: "string", n: "number", tags: "array" },
      evalFraction: 0.25,
      spec: { name, source: { kind: "stored", datasetId: ds.id, format: "jsonl" }, evalFraction: 0.25 },
    });
    const preview = await services.caller.dataset.preview({ id: ds.id });
    expect(preview.rows).toEqual([
      { prompt: "say a:", answer: "a", n: 1 },
      { prompt: "say b:", answer: "b", n: 2.5, tags: ["x"] },
    ]);
    expect((await services.caller.dataset.list()).items.map((d) => d.id)).toContain(ds.id);

    const updated = await services.caller.dataset.update({ id: ds.id, evalFraction: 0.5 });
    expect(updated.spec.evalFraction).toBe(0.5);
    expect(await services.caller.dataset.delete({ id: ds.id })).toEqual({ id: ds.id, deleted: true });
    expect(await services.db.dataset.count({ where: { id: ds.id } })).toBe(0);
  });

  it("reads Parquet (pyarrow-written, snappy) with its types", async () => {
    const name = freshName();
    const bytes = readFileSync(new URL("./fixtures/rows.parquet", import.meta.url));
    const ds = await services.caller.dataset.upload({ name, format: "parquet", contentBase64: b64(bytes) });
    expect(ds).toMatchObject({
      rowCount: 3,
      columns: ["prompt", "answer", "difficulty", "score", "ok"],
      columnTypes: { prompt: "string", answer: "string", difficulty: "integer", score: "number", ok: "boolean" },
    });
    const preview = await services.caller.dataset.preview({ id: ds.id, limit: 2 });
    expect(preview.rows).toEqual([
      { prompt: "say a:", answer: "a", difficulty: 1, score: 0.5, ok: true },
      { prompt: "say b:", answer: "b", difficulty: 2, score: 1.5, ok: false },
    ]);
  });

  it("refuses a malformed file naming its line, and stores nothing", async () => {
    const before = await services.db.dataset.count();
    const badJsonl = await rejectionOf(
      services.caller.dataset.upload({ name: freshName(), format: "jsonl", contentBase64: b64('{"a":1}\n{"a":2}\n{"a":\n') }),
    );
    expect(badJsonl.code).toBe("BAD_REQUEST");
    const issues = (badJsonl.cause as FieldValidationError).issues;
    expect(issues).toHaveLength(1);
    expect(issues[0]!.path).toBe("file");
    expect(issues[0]!.message).toMatch(/^line 3: not valid JSON/);

    const badCsv = await rejectionOf(
      services.caller.dataset.upload({ name: freshName(), format: "csv", contentBase64: b64("prompt,answer\nhi,1\nyo\n") }),
    );
    expect((badCsv.cause as FieldValidationError).issues[0]!.message).toBe("line 3: has 1 field(s); the header has 2");

    const badParquet = await rejectionOf(
      services.caller.dataset.upload({ name: freshName(), format: "parquet", contentBase64: b64("PAR1 definitely not parquet") }),
    );
    expect((badParquet.cause as FieldValidationError).issues[0]!.message).toMatch(/Parquet/);
    expect(await services.db.dataset.count()).toBe(before);
  });

  it("refuses a second dataset of one name (a RunSpec could not hold both)", async () => {
    const name = freshName();
    await services.caller.dataset.upload({ name, format: "csv", contentBase64: b64("prompt\nhi\n") });
    const error = await rejectionOf(services.caller.dataset.upload({ name, format: "csv", contentBase64: b64("prompt\nyo\n") }));
    expect((error.cause as FieldValidationError).issues).toEqual([{ path: "name", message: `a dataset named "${name}" already exists` }]);
  });

  it("stores Hugging Face and runner-host references as the RunSpec sources the runtime reads", async () => {
    const hfName = freshName();
    const hf = await services.caller.dataset.createReference({ kind: "huggingface", name: hfName, id: "openai/gsm8k", config: "main", split: "train" });
    expect(hf.spec).toEqual({ name: hfName, evalFraction: 0, source: { kind: "huggingface", id: "openai/gsm8k", config: "main", split: "train" } });
    const localName = freshName();
    const local = await services.caller.dataset.createReference({ kind: "local", name: localName, path: "/data/rows.jsonl", format: "jsonl", evalFraction: 0.1 });
    expect(local.spec).toEqual({ name: localName, evalFraction: 0.1, source: { kind: "file", path: "/data/rows.jsonl", format: "jsonl" } });
    const preview = await services.caller.dataset.preview({ id: local.id });
    expect(preview.rows).toEqual([]);
    expect(preview.unavailable).toMatch(/runner host/);
  });

  it("a launch naming a deleted upload is refused at the field, and no run is created", async () => {
    const spec = { ...DEMO_SPEC_INPUT, datasets: [{ name: "letters", source: { kind: "stored", datasetId: "gone", format: "jsonl" } }] };
    const experimentId = await createExperiment(services, spec);
    const error = await rejectionOf(services.caller.experiment.launch({ experimentId }));
    expect(error.code).toBe("BAD_REQUEST");
    expect((error.cause as FieldValidationError).issues).toEqual([{ path: "datasets.0.source.datasetId", message: 'no uploaded dataset has id "gone" (deleted?)' }]);
    expect(await services.db.run.count({ where: { experimentId } })).toBe(0);
  });
});
