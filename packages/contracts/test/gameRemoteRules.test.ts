import { describe, expect, it } from "vitest";
import { RunSpec, fieldIssues, type RunSpecInput } from "../src/index";
import { DEMO_SPEC_INPUT } from "../src/demo";

/**
 * `game` and `remote` environments (runSpec.ts). The runtime's mirror (gpu-runtime/tests/test_game_remote_rules.py)
 * runs the same cases with the same paths and words.
 */
function spec(env: Record<string, unknown>, change: (s: RunSpecInput) => void = () => {}): RunSpecInput {
  const s = structuredClone(DEMO_SPEC_INPUT);
  s.environments = [{ name: "env", dataset: "letters", actors: ["student"], rewards: [], ...env } as RunSpecInput["environments"][number]];
  change(s);
  return s;
}

function issues(s: RunSpecInput): Record<string, string> {
  const parsed = RunSpec.safeParse(s);
  return parsed.success ? {} : Object.fromEntries(fieldIssues(parsed.error).map((i) => [i.path, i.message]));
}

describe("game and remote environments", () => {
  it("accept their settings with defaults filled, and need no spec reward", () => {
    expect(issues(spec({ kind: "game", game: { name: "connect_four" } }))).toEqual({});
    const game = RunSpec.parse(spec({ kind: "game" })).environments[0]!;
    expect(game.kind).toBe("game");
    const remote = RunSpec.parse(spec({ kind: "remote", url: "http://envhost:8100", remote: {} })).environments[0]!;
    expect(remote.remote).toEqual({ timeoutSeconds: 30, failureScore: 0, maxConcurrentSessions: 256 });
    for (const url of ["https://envhost/env", "grpc://envhost:8101", "grpc://10.0.0.7:8101/"]) {
      expect(issues(spec({ kind: "remote", url }))).toEqual({});
    }
    const filled = RunSpec.parse(spec({ kind: "game", game: {} })).environments[0]!;
    expect(filled.game).toEqual({ name: "tic_tac_toe", opponent: "random", actorPlays: "first", legalMoveReward: 0 });
  });

  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    ["a remote environment without url", { kind: "remote" }, "environments.0.url", /needs url: "http:\/\/host:port"/],
    ["a url that is not http", { kind: "remote", url: "ftp://x" }, "environments.0.url", /http:\/\/ or https:\/\/ URL, or grpc:\/\/host:port/],
    ["a grpc url with a path", { kind: "remote", url: "grpc://envhost:8101/env" }, "environments.0.url", /grpc:\/\/host:port/],
    ["a timeout of 0", { kind: "remote", url: "http://x:1", remote: { timeoutSeconds: 0 } }, "environments.0.remote.timeoutSeconds", /./],
    ["no session allowed in flight", { kind: "remote", url: "http://x:1", remote: { maxConcurrentSessions: 0 } }, "environments.0.remote.maxConcurrentSessions", /./],
    ["a fractional session limit", { kind: "remote", url: "http://x:1", remote: { maxConcurrentSessions: 2.5 } }, "environments.0.remote.maxConcurrentSessions", /whole number/],
    ["a session timeout of 0", { kind: "remote", url: "http://x:1", remote: { sessionTimeoutSeconds: 0 } }, "environments.0.remote.sessionTimeoutSeconds", /./],
    ["an unknown game", { kind: "game", game: { name: "go" } }, "environments.0.game.name", /./], // chess is known since #29
    ["two actors against the random player", { kind: "game", actors: ["student", "student"] }, "environments.0.actors", /exactly one actor/],
    ["one actor in a game between actors", { kind: "game", game: { opponent: "actors" } }, "environments.0.actors", /exactly two/],
    ["a side between actors", { kind: "game", actors: ["student", "student"], game: { opponent: "actors", actorPlays: "second" } }, "environments.0.game.actorPlays", /only for opponent "random"/],
    ["a role named O playing X against the random player", { kind: "game", roles: { O: "student" } }, "environments.0.roles", /needs actorPlays "second"/],
    ["a negative legal-move reward", { kind: "game", game: { legalMoveReward: -1 } }, "environments.0.game.legalMoveReward", /./],
    ["a chess move format on another game", { kind: "game", game: { name: "connect_four", moveFormat: "index" } }, "environments.0.game.moveFormat", /only chess takes moveFormat/],
    ["a chess cutoff rule on another game", { kind: "game", game: { cutoff: "material" } }, "environments.0.game.cutoff", /only chess takes cutoff/],
    ["an unknown chess move format", { kind: "game", game: { name: "chess", moveFormat: "uci" } }, "environments.0.game.moveFormat", /./],
    ["game settings on another kind", { kind: "single_turn", rewards: [{ reward: "letter_match" }], game: {} }, "environments.0.game", /only game environments take game settings/],
    ["a url on another kind", { kind: "single_turn", rewards: [{ reward: "letter_match" }], url: "http://x:1" }, "environments.0.url", /only remote environments take a url/],
  ];
  it.each(cases)("refuses %s, by field", (_name, env, path, message) => {
    const found = issues(spec(env));
    expect(found[path]).toMatch(message);
  });
});
