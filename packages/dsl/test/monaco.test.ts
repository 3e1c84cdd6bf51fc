import { describe, expect, it } from "vitest";
import { errorsToMarkers, parse, roundSpecMonarch, ROUND_SPEC_LANGUAGE_ID, roundSpecLanguageConfiguration, validate, MARKER_SEVERITY_ERROR } from "../src";

/** Runs the Monarch root rules the way Monaco does for a single-state grammar: first rule matching at the cursor wins. */
function tokenize(line: string): [string, string][] {
  const out: [string, string][] = [];
  let i = 0;
  while (i < line.length) {
    let matched = false;
    for (const [regex, token] of roundSpecMonarch.tokenizer.root) {
      const sticky = new RegExp(regex.source, "y");
      sticky.lastIndex = i;
      const m = sticky.exec(line);
      if (m && m[0].length > 0) {
        out.push([m[0], token === "@brackets" ? "delimiter.parenthesis" : token]);
        i += m[0].length;
        matched = true;
        break;
      }
    }
    if (!matched) {
      out.push([line[i]!, roundSpecMonarch.defaultToken]);
      i += 1;
    }
  }
  return out.filter(([, t]) => t !== "white");
}

describe("Monarch tokenizer", () => {
  it("tells the two meanings of * apart and colours every construct", () => {
    expect(tokenize("Bob -> (Alice:3 / *)*(2..5) & gpt-4.1*2 # note")).toEqual([
      ["Bob", "identifier"],
      ["->", "operator.sequence"],
      ["(", "delimiter.parenthesis"],
      ["Alice", "identifier"],
      [":", "operator.weight"],
      ["3", "number"],
      ["/", "operator.choice"],
      ["*", "keyword.any"],
      [")", "delimiter.parenthesis"],
      ["*", "operator.repeat"],
      ["(", "delimiter.parenthesis"],
      ["2", "number"],
      ["..", "operator.range"],
      ["5", "number"],
      [")", "delimiter.parenthesis"],
      ["&", "operator.parallel"],
      ["gpt-4.1", "identifier"],
      ["*", "operator.repeat"],
      ["2", "number"],
      ["# note", "comment"],
    ]);
  });

  it("marks characters the language does not know as invalid, and names stop before ->", () => {
    expect(tokenize("A|B->C")).toEqual([
      ["A", "identifier"],
      ["|", "invalid"],
      ["B", "identifier"],
      ["->", "operator.sequence"],
      ["C", "identifier"],
    ]);
  });

  it("has a language id and a configuration with # comments and parentheses", () => {
    expect(ROUND_SPEC_LANGUAGE_ID).toBe("troupe-round-spec");
    expect(roundSpecLanguageConfiguration.comments.lineComment).toBe("#");
    expect(roundSpecLanguageConfiguration.brackets).toEqual([["(", ")"]]);
  });
});

describe("errorsToMarkers", () => {
  it("turns errors into error markers with the kind as code", () => {
    const source = "Bob -> Bbo";
    const result = parse(source);
    if (!result.ok) throw new Error("should parse");
    const markers = errorsToMarkers(validate(result.ast, { actors: ["Bob"] }), source);
    expect(markers).toEqual([
      {
        severity: MARKER_SEVERITY_ERROR,
        message: 'unknown actor "Bbo"; did you mean "Bob"?',
        startLineNumber: 1,
        startColumn: 8,
        endLineNumber: 1,
        endColumn: 11,
        code: "unknown_actor",
        source: "troupe-dsl",
      },
    ]);
  });

  it("converts code-point columns to UTF-16 columns after an astral character", () => {
    const source = "A # \u{1F3AD}\n-> B | C";
    const result = parse(source);
    if (result.ok) throw new Error("should not parse");
    expect(errorsToMarkers(result.errors, source)[0]).toMatchObject({ startLineNumber: 2, startColumn: 6, endColumn: 7 });
    const astral = "A -> \u{1F3AD}";
    const bad = parse(astral);
    if (bad.ok) throw new Error("should not parse");
    expect(errorsToMarkers(bad.errors, astral)[0]).toMatchObject({ startColumn: 6, endColumn: 8 });
  });

  it("widens an error at the very end so it is visible", () => {
    const source = "A ->";
    const result = parse(source);
    if (result.ok) throw new Error("should not parse");
    expect(errorsToMarkers(result.errors, source)[0]).toMatchObject({ startColumn: 4, endColumn: 5 });
  });
});
