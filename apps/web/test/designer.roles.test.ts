import { describe, expect, it } from "vitest";
import { EnvironmentSpec } from "@troupe/contracts";
import { newRoleName, playerNames, playsRoles, renamedRole, withRole, withRolesOn, withoutRole } from "../src/features/designer/lib/roles";

const game = { name: "ttt", kind: "game", dataset: "rows", actors: ["policy"], game: { name: "tic_tac_toe", opponent: "actors" } };

describe("environments[].roles in the designer", () => {
  it("is offered where turns or seats are named, not elsewhere", () => {
    expect(playsRoles("game")).toBe(true);
    expect(playsRoles("collaborative")).toBe(true);
    expect(playsRoles("single_turn")).toBe(false);
    expect(playsRoles("majority_vote")).toBe(false);
  });

  it("builds self-play: one actor in both seats, and the environment's actors follow the roles", () => {
    let d = withRolesOn(game, true);
    expect(d.roles).toEqual({ policy: "policy" });
    d = renamedRole(d, "policy", "X")!;
    d = withRole(d, "O", "policy");
    expect(d.roles).toEqual({ X: "policy", O: "policy" });
    expect(d.actors).toEqual(["policy"]);
    expect(playerNames(d)).toEqual(["X", "O"]);
    expect(EnvironmentSpec.safeParse(d).success).toBe(true);
    d = withRole(d, "O", "rival");
    expect(d.actors).toEqual(["policy", "rival"]);
  });

  it("moves a role's system prompt with it and drops it with the role", () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let d: Record<string, any> = { ...withRole(withRole(game, "pro", "policy"), "con", "policy"), systemPrompts: { pro: "argue for" } };
    d = renamedRole(d, "pro", "for")!;
    expect(Object.keys(d.roles)).toEqual(["for", "con"]); // the order (speaking order for `*`) kept
    expect(d.systemPrompts).toEqual({ for: "argue for" });
    expect(renamedRole(d, "for", "con")).toBeNull(); // a taken name is refused
    d = withoutRole(d, "for");
    expect(d.roles).toEqual({ con: "policy" });
    expect(d.systemPrompts).toEqual({});
    expect(newRoleName(d)).toBe("role2");
  });

  it("turned off, the draft is the one without roles", () => {
    const d = withRolesOn(withRole(game, "X", "policy"), false);
    expect("roles" in d).toBe(false);
    expect(playerNames(d)).toEqual(["policy"]);
  });
});
