import { describe, expect, it } from "vitest";
import { ACTION_WORDS, actionWords, roleRefusal } from "../src/features/auth/lib/actionWords";
import { PROCEDURE_ROLES } from "../src/features/auth/server/procedureRules";

describe("refusals say the role and the action in words", () => {
  it("a viewer refused a delete reads as a sentence, with no procedure name", () => {
    expect(roleRefusal("viewer", "editor", actionWords("run.delete"))).toBe("Viewers cannot delete runs: ask an editor or admin");
    expect(roleRefusal("editor", "admin", actionWords("user.invite"))).toBe("Editors cannot invite users: ask an admin");
  });

  it("every procedure above viewer has words (a new one cannot fall back to its internal name)", () => {
    const missing = Object.entries(PROCEDURE_ROLES)
      .filter(([, role]) => role !== "viewer")
      .map(([path]) => path)
      .filter((path) => !(path in ACTION_WORDS));
    expect(missing).toEqual([]);
  });

  it("no words name an internal procedure", () => {
    for (const words of Object.values(ACTION_WORDS)) expect(words).not.toMatch(/\w\.\w/);
  });
});
