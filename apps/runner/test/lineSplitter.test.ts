import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { LineSplitter, splitLines } from "../src/io/lineSplitter";

const collect = (max?: number) => {
  const lines: [string, boolean][] = [];
  const splitter = new LineSplitter((line, truncated) => lines.push([line, truncated]), max);
  return { lines, splitter };
};

describe("LineSplitter", () => {
  it("joins lines split across chunks and emits a final line without newline", () => {
    const { lines, splitter } = collect();
    splitter.write("ab");
    splitter.write("c\nde");
    splitter.write("f\n\ng");
    splitter.end();
    expect(lines).toEqual([["abc", false], ["def", false], ["", false], ["g", false]]);
  });

  it("decodes a UTF-8 character split between chunks and drops \\r", () => {
    const { lines, splitter } = collect();
    const bytes = Buffer.from("héllo ✓\r\n", "utf8");
    const cut = bytes.indexOf(0xa9); // second byte of é
    splitter.write(bytes.subarray(0, cut));
    splitter.write(bytes.subarray(cut, cut + 6));
    splitter.write(bytes.subarray(cut + 6));
    splitter.end();
    expect(lines).toEqual([["héllo ✓", false]]);
  });

  it("cuts an over-long line, skips its rest, and goes on with the next line", () => {
    const { lines, splitter } = collect(5);
    splitter.write("0123");
    splitter.write("456789");
    splitter.write("abc\nok\n");
    splitter.end();
    expect(lines).toEqual([["01234", true], ["ok", false]]);
  });

  it("emits nothing at end when the input ended with a newline", () => {
    const { lines, splitter } = collect();
    splitter.write("a\n");
    splitter.end();
    expect(lines).toEqual([["a", false]]);
  });

  it("splitLines reads a stream to its end", async () => {
    const stream = new PassThrough();
    const lines: string[] = [];
    const done = splitLines(stream, (l) => lines.push(l));
    stream.write("x\ny");
    stream.end("z\n");
    await done;
    expect(lines).toEqual(["x", "yz"]);
  });
});
