import { describe, expect, it } from "vitest";
import { EnvironmentSpec, MULTI_AGENT_DEMO_SPEC_INPUT, type RunSpecInput } from "@troupe/contracts";
import { checkLaunch } from "../src/features/runs/lib/launchCheck";
import { newRoleActor, newRoleName, playerNames, playsRoles, renamedRole, withRole, withRolesOn, withoutRole } from "../src/features/designer/lib/roles";

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

  it("starts a new role with an actor the environment already uses, not the run's first actor", () => {
    const d = withRolesOn(game, true);
    expect(newRoleActor(d, ["judge", "policy"])).toBe("policy");
    expect(newRoleActor({ ...game, actors: [] }, ["judge", "policy"])).toBe("judge");
    expect(newRoleActor({ ...game, actors: ["gone"] }, ["judge"])).toBe("judge");
    expect(newRoleActor({ ...game, actors: [] }, [])).toBe("");
  });

  it("turned off, the draft is the one without roles", () => {
    const d = withRolesOn(withRole(game, "X", "policy"), false);
    expect("roles" in d).toBe(false);
    expect(playerNames(d)).toEqual(["policy"]);
  });
});

describe("the launch check reads a round spec over roles", () => {
  const withRoles = (roundSpec: string): RunSpecInput => {
    const spec = structuredClone(MULTI_AGENT_DEMO_SPEC_INPUT) as RunSpecInput;
    spec.environments[0] = { ...spec.environments[0]!, roles: { pro: "alice", con: "bob" }, roundSpec };
    return spec;
  };

  it("passes a round spec naming the roles, and refuses one naming the actors behind them", () => {
    expect(checkLaunch(withRoles("pro -> con")).issues).toEqual([]);
    const { issues } = checkLaunch(withRoles("alice -> bob"));
    expect(issues.map((i) => i.path)).toEqual(["environments.0.roundSpec", "environments.0.roundSpec"]); // alice, then bob
    expect(issues.map((i) => i.message).join(" ")).toMatch(/alice.*bob/);
  });
});
