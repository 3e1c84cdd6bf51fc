import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DatasetParseError, MAX_DATASET_BYTES, parseDataset, formatFromFileName } from "../src/features/datasets/server/parseDataset";

const bytes = (s: string) => new TextEncoder().encode(s);

async function failure(promise: Promise<unknown>): Promise<DatasetParseError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(DatasetParseError);
  return error as DatasetParseError;
}

describe("parseDataset", () => {
  it("JSONL: columns in first-seen order, types merged across rows, blank lines skipped", async () => {
    const parsed = await parseDataset("jsonl", bytes('{"a":1,"b":"x"}\n\n{"a":2.5,"c":null}\r\n{"a":3,"b":["y"]}\n'));
    expect(parsed.rowCount).toBe(3);
    expect(parsed.columns).toEqual(["a", "b", "c"]);
    expect(parsed.columnTypes).toEqual({ a: "number", b: "array|string", c: "null" });
    expect(parsed.preview).toHaveLength(3);
  });

  it("JSONL: names the line of a row that is not an object", async () => {
    const error = await failure(parseDataset("jsonl", bytes('{"a":1}\n[1,2]\n')));
    expect(error.line).toBe(2);
    expect(error.message).toBe("line 2: each line must be a JSON object (a row with named fields)");
  });

  it("CSV: quoted fields across lines; every value a string; the line of a short row", async () => {
    const parsed = await parseDataset("csv", bytes('prompt,answer\n"two\nlines",1\nb,2\n'));
    expect(parsed.preview[0]).toEqual({ prompt: "two\nlines", answer: "1" });
    expect(parsed.columnTypes).toEqual({ prompt: "string", answer: "string" });
    const error = await failure(parseDataset("csv", bytes('prompt,answer\n"two\nlines",1\nb\n')));
    expect(error.line).toBe(4);
  });

  it("Parquet: a pyarrow file with int64, double and bool columns", async () => {
    const parsed = await parseDataset("parquet", new Uint8Array(readFileSync(new URL("./fixtures/rows.parquet", import.meta.url))));
    expect(parsed.rowCount).toBe(3);
    expect(parsed.columnTypes).toEqual({ prompt: "string", answer: "string", difficulty: "integer", score: "number", ok: "boolean" });
  });

  it("refuses files over the limit, non-UTF-8 text and empty files", async () => {
    expect((await failure(parseDataset("jsonl", new Uint8Array(MAX_DATASET_BYTES + 1)))).message).toMatch(/limit is 10485760 bytes/);
    expect((await failure(parseDataset("csv", new Uint8Array([0x61, 0xff, 0x0a])))).message).toBe("the file is not UTF-8 text");
    expect((await failure(parseDataset("jsonl", bytes("\n\n")))).message).toBe("the file holds no rows");
  });

  it("tells the format from the file name", () => {
    expect(["a.jsonl", "b.NDJSON", "c.csv", "d.parquet", "e.txt"].map(formatFromFileName)).toEqual(["jsonl", "jsonl", "csv", "parquet", null]);
  });
});
