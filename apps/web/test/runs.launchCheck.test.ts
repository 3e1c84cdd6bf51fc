import { DEMO_SPEC_INPUT, MULTI_AGENT_DEMO_SPEC_INPUT } from "@troupe/contracts";
import { describe, expect, it } from "vitest";
import { checkLaunch } from "../src/features/runs/lib/launchCheck";
import { pythonSyntaxIssues } from "../src/features/runs/lib/pythonSyntax";
import { validateDraft } from "../src/features/experiments/lib/specIssues";

/** The one pre-queue check (UI launch, REST, CLI, composer): schema, round specs, reward code. */

const twoActors = (roundSpec: string) => ({
  ...DEMO_SPEC_INPUT,
  actors: [...DEMO_SPEC_INPUT.actors, { name: "Bob", model: { source: "tiny" }, trainable: false }],
  environments: [{ ...DEMO_SPEC_INPUT.environments[0], kind: "collaborative", actors: ["student", "Bob"], roundSpec }],
});

const withReward = (code: string, entrypoint?: string) => ({
  ...DEMO_SPEC_INPUT,
  rewards: [{ name: "letter_match", source: { kind: "python", code, ...(entrypoint ? { entrypoint } : {}) } }],
});

const GOOD_REWARD = "def reward(prompt, completion, **row):\n    return 1.0 if completion.strip() == row['answer'] else 0.0\n";

describe("checkLaunch", () => {
  it("passes the demo and a two-actor round spec naming its actors", () => {
    expect(checkLaunch(DEMO_SPEC_INPUT).issues).toEqual([]);
    expect(checkLaunch(twoActors("student -> Bob -> (student / Bob)*2")).issues).toEqual([]);
    expect(checkLaunch(withReward(GOOD_REWARD)).issues).toEqual([]);
    expect(checkLaunch(MULTI_AGENT_DEMO_SPEC_INPUT).issues).toEqual([]);
  });

  it("refuses a round spec that names an unknown actor, at its field with line and column", () => {
    const { spec, issues } = checkLaunch(twoActors("student -> Carol"));
    expect(spec).toBeNull();
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ path: "environments.0.roundSpec", line: 1, column: 12 });
    expect(issues[0]!.message).toMatch(/Carol/);
  });

  it("refuses a reward whose Python does not parse, at its code with line and column", () => {
    const { issues } = checkLaunch(withReward("def reward(prompt, completion:\n    return 1\n"));
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ path: "rewards.0.source.code", line: 2 });
    expect(issues[0]!.message).toMatch(/invalid Python syntax/);
  });

  it("refuses a reward that does not define its entrypoint", () => {
    const { issues } = checkLaunch(withReward("def score(prompt, completion):\n    return 1\n"));
    expect(issues).toEqual([{ path: "rewards.0.source.entrypoint", message: expect.stringMatching(/no top-level `reward`/) }]);
    expect(checkLaunch(withReward("def score(prompt, completion):\n    return 1\n", "score")).issues).toEqual([]);
  });

  it("reports schema errors first, by field", () => {
    const { issues } = checkLaunch({ ...DEMO_SPEC_INPUT, trainer: { ...DEMO_SPEC_INPUT.trainer, steps: -1 } });
    expect(issues.map((i) => i.path)).toEqual(["trainer.steps"]);
  });
});

describe("pythonSyntaxIssues", () => {
  it.each([
    ["a missing bracket (found where the parser gave up)", "def reward(p, c:\n    return 1\n", 2],
    ["a body that is not indented", "def reward(p, c):\nreturn 1\n", 2],
    ["an unterminated string", "def reward(p, c):\n    return 'abc\n", 2],
    ["a stray operator", "def reward(p, c):\n    x == = 1\n", 2],
  ])("finds %s", (_what, code, line) => {
    const issues = pythonSyntaxIssues(code);
    expect(issues).toHaveLength(1);
    expect(issues[0]!.line).toBe(line);
  });

  it.each([
    ["f-strings", "def reward(p, c, **row):\n    x = f\"{c!r} {row['a']}\"\n    return len(x)\n"],
    ["match statements", "def reward(p, c):\n    match c:\n        case 'a':\n            return 1\n        case _:\n            return 0\n"],
    ["the walrus operator and annotations", "def reward(p: str, c: str, **row) -> float:\n    if (n := len(c)) > 3:\n        return n\n    return 0.0\n"],
    ["triple-quoted and escaped strings", "def reward(p, c):\n    '''doc'''\n    s = 'it\\'s'\n    return r\"\\d\" in c\n"],
  ])("accepts %s", (_what, code) => {
    expect(pythonSyntaxIssues(code)).toEqual([]);
  });
});

describe("the composer's validation is the launch's", () => {
  it("does not call a spec with a broken reward valid", () => {
    const { spec, issues } = validateDraft(withReward("def reward(p, c):\n    return (1\n"));
    expect(spec).toBeNull();
    expect(issues[0]).toMatchObject({ path: "rewards.0.source.code", section: "rewards" });
  });
});
