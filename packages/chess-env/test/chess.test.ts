// Chess rules and outcomes as Troupe's chess environment plays them (chess.js underneath), on fixed games,
// and the reset/step protocol over real HTTP.
import { describe, expect, it } from "vitest";
import { actorMoves, board, findIndex, findMove, material, newGame, rewards } from "../src/game.mjs";
import { serve } from "../src/server.mjs";

const settings = { legalMoveReward: 0, maxActorMoves: 0, showLegalMoves: false, board: "fen" as const };

describe("chess games", () => {
  it("fool's mate: black mates in two, white scores -1 and black 1", () => {
    const game = newGame(["white-actor", "black-actor"], settings, 1);
    for (const move of ["f3", "e5", "g4"]) expect(actorMoves(game, move)).not.toMatch(/forfeit|wins/);
    const reply = actorMoves(game, "Qh4#");
    expect(reply).toMatch(/black wins \(checkmate\)/);
    expect(rewards(game)).toEqual({ "white-actor": { game: -1 }, "black-actor": { game: 1 } });
  });

  it("stalemate is a draw for both", () => {
    // Black king a8 boxed in by the white queen after Qc7: no legal move, not in check.
    const game = newGame(["w", "b"], { ...settings, fen: "k7/8/1K6/8/8/8/8/2Q5 w - - 0 1" }, 1);
    expect(actorMoves(game, "Qc7")).toMatch(/draw \(stalemate\)/);
    expect(rewards(game)).toEqual({ w: { game: 0 }, b: { game: 0 } });
  });

  it("an illegal move forfeits on the spot: the offender -1, the opponent 0, legal moves still counted", () => {
    const game = newGame(["w", "b"], { ...settings, legalMoveReward: 0.1 }, 1);
    actorMoves(game, "e4");
    const reply = actorMoves(game, "Ke5, then e5");
    expect(reply).toMatch(/^illegal move Ke5: black forfeits/);
    expect(rewards(game)).toEqual({ w: { game: 0, legal_moves: 0.1 }, b: { game: -1, legal_moves: 0 } });
  });

  it("no move at all forfeits too", () => {
    const game = newGame(["w", null], settings, 1);
    expect(actorMoves(game, "hmm")).toMatch(/^no move: white forfeits/);
    expect(rewards(game)).toEqual({ w: { game: -1 } });
  });

  it("moves are read as SAN or coordinates, with move numbers and check marks", () => {
    expect(findMove("1. e4")).toBe("e4");
    expect(findMove("I play g1f3 now")).toBe("g1f3");
    expect(findMove("castle: 0-0")).toBe("O-O");
    expect(findMove("Qxf7#!")).toBe("Qxf7#!");
    expect(findMove("no move here")).toBeNull();
    const game = newGame(["w", "b"], settings, 1);
    expect(actorMoves(game, "g1f3")).toMatch(/FEN rnbqkbnr\/pppppppp\/8\/8\/8\/5N2/);
  });

  it("the random player answers with legal moves, the same ones for the same seed, and the game is cut off when asked", () => {
    const play = (seed: number) => {
      const game = newGame(["w", null], { ...settings, maxActorMoves: 3, legalMoveReward: 0.5 }, seed);
      const replies = ["Nf3", "Ng1", "Nf3"].map((m) => actorMoves(game, m));
      return { replies, rewards: rewards(game) };
    };
    const a = play(7);
    expect(a).toEqual(play(7));
    expect(a.replies[2]).toMatch(/draw \(cut off after 3 moves\)/);
    expect(a.rewards).toEqual({ w: { game: 0, legal_moves: 1.5 } });
  });

  it("moveFormat index: the legal moves are listed numbered and a number picks one; none or out of range forfeits", () => {
    const game = newGame(["w", "b"], { ...settings, moveFormat: "index" }, 1);
    expect(board(game)).toMatch(/\nmoves: 0:a3 1:a4 2:b3 .* 19:Nh3$/); // chess.js's order of the 20 opening moves
    expect(findIndex("I pick 17, then 3")).toBe("17");
    expect(actorMoves(game, "17")).toMatch(/FEN rnbqkbnr\/pppppppp\/8\/8\/8\/2N5\/PPPPPPPP\/R1BQKBNR b/); // 16:Na3 17:Nc3 18:Nf3 19:Nh3 after the pawns
    const outOfRange = actorMoves(game, "20");
    expect(outOfRange).toMatch(/^move 20 is not in the list \(0-19\): black forfeits/);
    expect(rewards(game)).toEqual({ w: { game: 0 }, b: { game: -1 } });
    const silent = newGame(["w", "b"], { ...settings, moveFormat: "index" }, 1);
    expect(actorMoves(silent, "Nf")).toMatch(/^no move: white forfeits/); // no number in it
  });

  it("cutoff material: a game cut off at the move cap is won by the side ahead in material, equal material draws", () => {
    // White takes the black queen on a8 with check (Rxa8+); the black king cannot take back: 5-0 after black's reply.
    const ahead = newGame(["w", null], { ...settings, maxActorMoves: 1, cutoff: "material", fen: "q6k/8/8/8/8/8/8/R3K3 w - - 0 1" }, 1);
    expect(material(ahead.chess)).toEqual([5, 9]);
    expect(actorMoves(ahead, "Rxa8+")).toMatch(/white wins \(cut off after 1 moves, material 5-0\)/);
    expect(rewards(ahead)).toEqual({ w: { game: 1 } });
    const level = newGame(["w", null], { ...settings, maxActorMoves: 1, cutoff: "material" }, 1);
    expect(actorMoves(level, "e4")).toMatch(/draw \(cut off after 1 moves, material 39-39\)/);
  });
});

describe("the chess server speaks Troupe's remote protocol", () => {
  it("reset, step to a result, health, errors as 400", async () => {
    const server = await serve({ port: 0, host: "127.0.0.1", opponent: "actors", actorPlays: "first", legalMoveReward: 0, maxActorMoves: 0, showLegalMoves: true, board: "fen", seed: 3 });
    const { port } = server.address() as { port: number };
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: "POST", body: JSON.stringify(body) });
      return { status: res.status, body: await res.json() };
    };
    try {
      const reset = await post("/reset", { session: "s1", row: {}, actors: ["alice", "bob"], sample: 0 });
      expect(reset.status).toBe(200);
      expect(reset.body).toMatchObject({ next: "alice", done: false });
      expect(reset.body.message).toMatch(/alice plays white, bob plays black/);
      expect(reset.body.message).toMatch(/legal: .*e4/);
      const moves: [string, string][] = [["alice", "f3"], ["bob", "e5"], ["alice", "g4"]];
      for (const [actor, text] of moves) {
        const step = await post("/step", { session: "s1", actor, text });
        expect(step.body).toMatchObject({ done: false, rewards: null });
      }
      const wrongTurn = await post("/step", { session: "s1", actor: "alice", text: "e4" });
      expect(wrongTurn.status).toBe(400);
      const mate = await post("/step", { session: "s1", actor: "bob", text: "Qh4#" });
      expect(mate.body).toMatchObject({ done: true, next: null, rewards: { alice: { game: -1 }, bob: { game: 1 } } });
      const health = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.json());
      expect(health).toEqual({ ok: true, environment: "chess", sessions: 0 });
      expect((await post("/step", { session: "gone", actor: "alice", text: "e4" })).status).toBe(400);
      expect((await post("/reset", { session: "s2", row: {}, actors: ["only-one"], sample: 0 })).status).toBe(400);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
