import { describe, expect, it } from "vitest";
import { MIN_REFRESH_MS, nextRefresh } from "../src/features/runs/lib/transcriptRefresh";

describe("the Transcripts tab re-reads when episodes arrive and when the run ends", () => {
  it("reads once more when the run ends, even with no new episode event counted", () => {
    expect(nextRefresh({ live: true, seenAtRead: 40, readAt: 0 }, false, 40, 10)).toBe("now");
  });

  it("reads as new episodes stream in, at most once a second", () => {
    expect(nextRefresh({ live: true, seenAtRead: 40, readAt: 0 }, true, 48, MIN_REFRESH_MS + 1)).toBe("now");
    expect(nextRefresh({ live: true, seenAtRead: 40, readAt: 1000 }, true, 48, 1400)).toBe(600);
    expect(nextRefresh({ live: true, seenAtRead: 48, readAt: 0 }, true, 48, 99_000)).toBeNull();
  });

  it("an ended run with nothing new is left alone", () => {
    expect(nextRefresh({ live: false, seenAtRead: 60, readAt: 0 }, false, 60, 99_000)).toBeNull();
  });
});
