import { describe, expect, it } from "vitest";
import { transcriptFiltersFromQuery, transcriptsHref } from "../src/features/runs/lib/transcriptLink";

/** An advisory's links open the Transcripts tab with its filters; the browser reads back what the link set. */
describe("transcript links", () => {
  it("round-trips a step range with an actor, and a single group", () => {
    const range = transcriptsHref("run 1", { fromStep: 81, toStep: 85, actor: "student" });
    expect(range).toBe("/runs/run%201?tab=transcripts&tfrom=81&tto=85&tactor=student");
    expect(transcriptFiltersFromQuery(new URL(range, "http://x").searchParams)).toEqual({ fromStep: 81, toStep: 85, actor: "student" });
    const group = transcriptsHref("r", { step: 85, group: 0, environment: "relay" });
    expect(transcriptFiltersFromQuery(new URL(group, "http://x").searchParams)).toEqual({ step: 85, group: 0, environment: "relay" });
  });

  it("leaves out what is malformed: negative or fractional numbers, an inverted range", () => {
    expect(transcriptFiltersFromQuery(new URLSearchParams("tstep=-1&tgroup=1.5&tactor="))).toEqual({});
    expect(transcriptFiltersFromQuery(new URLSearchParams("tfrom=9&tto=3&tstep=4"))).toEqual({ step: 4 });
  });
});
