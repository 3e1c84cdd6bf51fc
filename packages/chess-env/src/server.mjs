#!/usr/bin/env node
// Chess as a Troupe remote environment (the reset/step protocol of gpu-runtime/src/troupe/remote/protocol.py,
// JSON over HTTP). The runtime starts it for environments with game.name "chess"; anyone can also run it and
// point a `remote` environment at it.
//
//   node server.mjs [--port 0] [--host 127.0.0.1] [--opponent random|actors] [--actor-plays first|second|alternate]
//                   [--legal-move-reward 0] [--max-actor-moves 0] [--show-legal-moves] [--board fen|ascii] [--seed 0]
//                   [--move-format san|index] [--cutoff draw|material]
//
// Prints `listening on http://HOST:PORT` once it accepts connections.
import { createServer } from "node:http";
import { actorMoves, board, hash, letRandomMove, newGame, nextActor, rewards, SIDES } from "./game.mjs";

export function parseArgs(argv) {
  const opts = { port: 0, host: "127.0.0.1", opponent: "random", actorPlays: "first", legalMoveReward: 0, maxActorMoves: 0, showLegalMoves: false, board: "fen", seed: 0, moveFormat: "san", cutoff: "draw" };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === "--port") opts.port = Number(value());
    else if (flag === "--host") opts.host = value();
    else if (flag === "--opponent") opts.opponent = value();
    else if (flag === "--actor-plays") opts.actorPlays = value();
    else if (flag === "--legal-move-reward") opts.legalMoveReward = Number(value());
    else if (flag === "--max-actor-moves") opts.maxActorMoves = Number(value());
    else if (flag === "--show-legal-moves") opts.showLegalMoves = true;
    else if (flag === "--board") opts.board = value();
    else if (flag === "--seed") opts.seed = Number(value());
    else if (flag === "--move-format") opts.moveFormat = value();
    else if (flag === "--cutoff") opts.cutoff = value();
    else throw new Error(`unknown flag ${flag}`);
  }
  if (!["random", "actors"].includes(opts.opponent)) throw new Error("--opponent must be random or actors");
  if (!["first", "second", "alternate"].includes(opts.actorPlays)) throw new Error("--actor-plays must be first, second or alternate");
  if (!["fen", "ascii"].includes(opts.board)) throw new Error("--board must be fen or ascii");
  if (!["san", "index"].includes(opts.moveFormat)) throw new Error("--move-format must be san or index");
  if (!["draw", "material"].includes(opts.cutoff)) throw new Error("--cutoff must be draw or material");
  return opts;
}

class BadRequest extends Error {}

/** The protocol's handlers over a table of sessions; `opts` from parseArgs. */
export function chessEnvironment(opts) {
  const sessions = new Map();
  const players = (actors, sample) => {
    if (opts.opponent === "actors") {
      if (actors.length !== 2) throw new BadRequest("a game between actors has exactly two (the first plays white)");
      return [actors[0], actors[1]];
    }
    if (actors.length !== 1) throw new BadRequest("a game against the random player has exactly one actor");
    const second = opts.actorPlays === "second" || (opts.actorPlays === "alternate" && sample % 2 === 1);
    return second ? [null, actors[0]] : [actors[0], null];
  };
  return {
    sessions,
    reset({ session, row, actors, sample }) {
      if (typeof session !== "string" || !Array.isArray(actors)) throw new BadRequest("reset needs session and actors");
      const sides = players(actors, Number(sample) || 0);
      const settings = { legalMoveReward: opts.legalMoveReward, maxActorMoves: opts.maxActorMoves, showLegalMoves: opts.showLegalMoves, board: opts.board, moveFormat: opts.moveFormat, cutoff: opts.cutoff, fen: row && typeof row.fen === "string" ? row.fen : undefined };
      let game;
      try {
        game = newGame(sides, settings, hash(`${opts.seed}:${JSON.stringify(row ?? {})}:${sample}`));
      } catch (e) {
        throw new BadRequest(`row.fen: ${e instanceof Error ? e.message : e}`);
      }
      sessions.set(session, game);
      const opened = letRandomMove(game);
      const who = sides.map((name, side) => (name === null ? null : `${name} plays ${SIDES[side]}`)).filter(Boolean).join(", ");
      const how = opts.moveFormat === "index" ? "answer with the number of a listed move" : "moves in SAN like Nf3 or coordinates like g1f3";
      const opening = `chess (${how}): ${who}. ${opened.map((s) => `${s}. `).join("")}${board(game)}`;
      return { message: opening, next: nextActor(game), done: game.result !== null };
    },
    step({ session, actor, text }) {
      const game = sessions.get(session);
      if (!game) throw new BadRequest(`no session ${session}`);
      if (actor !== nextActor(game)) throw new BadRequest(`it is not ${actor}'s move`);
      const reply = actorMoves(game, String(text ?? ""));
      const done = game.result !== null;
      if (done) sessions.delete(session);
      return { messages: [{ text: reply, to: null }], next: done ? null : nextActor(game), done, rewards: done ? rewards(game) : null };
    },
    close({ session }) {
      return { closed: sessions.delete(session) };
    },
  };
}

export function serve(opts) {
  const env = chessEnvironment(opts);
  const server = createServer((req, res) => {
    const send = (status, body) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method === "GET" && req.url === "/health") return send(200, { ok: true, environment: "chess", sessions: env.sessions.size });
    const call = { "/reset": env.reset, "/step": env.step, "/close": env.close }[req.url ?? ""];
    if (req.method !== "POST" || !call) return send(404, { error: `no ${req.method} ${req.url}` });
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => {
      raw += chunk;
      if (raw.length > 1_000_000) req.destroy();
    });
    req.on("end", () => {
      try {
        send(200, call(JSON.parse(raw || "{}")));
      } catch (e) {
        send(e instanceof BadRequest || e instanceof SyntaxError ? 400 : 500, { error: e instanceof Error ? e.message : String(e) });
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => server.listen(opts.port, opts.host, () => resolve(server)));
}

const isMain = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain) {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`troupe-chess-env: ${e instanceof Error ? e.message : e}`);
    process.exit(2);
  }
  const server = await serve(opts);
  const { address, port } = server.address();
  console.log(`listening on http://${address}:${port}`);
  const stop = () => server.close(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
