import { describe, expect, it } from "vitest";
import { formatTags, parseTags, textMatchesTags } from "../src/features/experiments/lib/tags";

describe("tags typed in the composer", () => {
  it("split on commas and trim: `walk, relay` is two tags", () => {
    expect(parseTags("walk, relay")).toEqual(["walk", "relay"]);
    expect(parseTags(" a ,b,, c ,a")).toEqual(["a", "b", "c"]);
    expect(parseTags("")).toEqual([]);
  });

  it("typing key by key keeps the comma on screen (the text still says the same tags)", () => {
    // After "walk," the draft holds ["walk"]; the box must keep "walk," so the next key extends it.
    let text = "";
    let tags: string[] = [];
    for (const ch of "walk, relay") {
      const shown = textMatchesTags(text, tags) ? text : formatTags(tags);
      text = shown + ch;
      tags = parseTags(text);
    }
    expect(text).toBe("walk, relay");
    expect(tags).toEqual(["walk", "relay"]);
  });

  it("tags set elsewhere replace the typed text", () => {
    expect(textMatchesTags("walk, relay", ["other"])).toBe(false);
    expect(textMatchesTags("walk, ", ["walk"])).toBe(true);
  });
});
