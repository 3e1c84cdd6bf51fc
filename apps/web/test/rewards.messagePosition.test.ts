import { describe, expect, it } from "vitest";
import { messagePosition } from "../src/features/rewards/lib/messagePosition";
import { rewardCodeIssues } from "../src/features/runs/lib/launchCheck";

describe("the reward editor's squiggle sits where the message says", () => {
  it("reads line and column from the syntax message", () => {
    expect(messagePosition("line 3, column 29: invalid Python syntax near `)`")).toEqual({ line: 3, column: 29 });
    expect(messagePosition("SyntaxError at line 7")).toEqual({ line: 7, column: 1 });
    expect(messagePosition("the code defines no top-level `reward`")).toEqual({ line: 1, column: 1 });
  });

  it("the position of a real syntax issue's message is the issue's own position", () => {
    const code = "def reward(prompt, completion, **row):\n    x = 1\n    return float(completion == row['letter']))\n";
    const [issue] = rewardCodeIssues({ source: { kind: "python", code, entrypoint: "reward" } } as never);
    expect(issue).toBeDefined();
    expect(issue!.line).toBeGreaterThan(1);
    expect(messagePosition(issue!.message)).toEqual({ line: issue!.line, column: issue!.column });
  });
});
