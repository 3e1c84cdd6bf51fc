// Chess for Troupe: one game per session, rules and outcomes from chess.js. Pure functions of a session
// object, so the HTTP server (server.mjs) stays a thin transport and the tests drive games directly.
import { Chess } from "chess.js";

export const SIDES = ["white", "black"];
const MOVE_TOKEN = /^(?:O-O(?:-O)?|0-0(?:-0)?|[KQRBN]?[a-h]?[1-8]?x?[a-h][1-8](?:=?[QRBNqrbn])?|[a-h][1-8][a-h][1-8][qrbn]?)[+#]?[!?]*$/;

/** A small seeded generator (mulberry32), so the random player repeats for a seed. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a of a string: a session's seed from the run's seed, its dataset row and its sample index. */
export function hash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * The first move-like word of a message (SAN `Nf3`, `O-O`, `exd5`, `e8=Q`, or coordinates `e2e4`, `e7e8q`),
 * or null when there is none. Whether it is legal is the game's to say.
 */
export function findMove(text) {
  for (const raw of String(text).split(/[\s,;:()[\]{}"'`]+/)) {
    const word = raw.replace(/^\d+\.(?:\.\.)?/, "").replace(/[.]+$/, "");
    if (word && MOVE_TOKEN.test(word)) return word.replace(/^0-0-0/, "O-O-O").replace(/^0-0/, "O-O");
  }
  return null;
}

/** The first number in a message (an index into the listed legal moves), or null. */
export function findIndex(text) {
  const match = /\d+/.exec(String(text));
  return match ? match[0] : null;
}

/** Material per side (pawn 1, knight and bishop 3, rook 5, queen 9): what a cut-off game is adjudicated by. */
export const PIECE_VALUES = { p: 1, n: 3, b: 3, r: 5, q: 9, k: 0 };
export function material(chess) {
  const sides = [0, 0];
  for (const row of chess.board()) for (const square of row) if (square) sides[square.color === "w" ? 0 : 1] += PIECE_VALUES[square.type];
  return sides;
}

/** Plays `word` if it is a legal move in this position (SAN or coordinates); the SAN played, or null. */
export function tryMove(chess, word) {
  const coords = /^([a-h][1-8])([a-h][1-8])([qrbn])?$/.exec(word);
  try {
    const move = coords ? chess.move({ from: coords[1], to: coords[2], promotion: coords[3] }) : chess.move(word, { strict: false });
    return move ? move.san : null;
  } catch {
    return null;
  }
}

/**
 * A new game. `players`: [white, black], actor names or null for the built-in random player.
 * `settings`: { legalMoveReward, maxActorMoves, showLegalMoves, board: "fen" | "ascii", moveFormat?: "san" | "index",
 *   cutoff?: "draw" | "material", fen? }.
 */
export function newGame(players, settings, seed) {
  return {
    chess: new Chess(settings.fen),
    players,
    settings,
    random: rng(seed),
    legalMoves: [0, 0],
    result: null, // per side when over: 1 win, 0 draw, -1 loss
    forfeit: null, // the side that lost by an illegal or unreadable move
    reason: null,
  };
}

const sideToMove = (game) => (game.chess.turn() === "w" ? 0 : 1);

export function board(game) {
  const { chess, settings } = game;
  const text = settings.board === "ascii" ? chess.ascii().trimEnd() : `FEN ${chess.fen()}`;
  if (game.result) return text;
  if (settings.moveFormat === "index") return `${text}\nmoves: ${chess.moves().map((m, i) => `${i}:${m}`).join(" ")}`;
  return text + (settings.showLegalMoves ? `\nlegal: ${chess.moves().join(" ")}` : "");
}

function finishIfOver(game) {
  const { chess } = game;
  if (!chess.isGameOver()) return;
  if (chess.isCheckmate()) {
    const loser = sideToMove(game);
    game.result = loser === 0 ? [-1, 1] : [1, -1];
    game.reason = "checkmate";
  } else {
    game.result = [0, 0];
    game.reason = chess.isStalemate()
      ? "stalemate"
      : chess.isThreefoldRepetition()
        ? "threefold repetition"
        : chess.isInsufficientMaterial()
          ? "insufficient material"
          : "fifty-move rule";
  }
}

/** The random player's move (a uniformly random legal move), played. */
export function playRandom(game) {
  const moves = game.chess.moves();
  const san = moves[Math.floor(game.random() * moves.length)];
  game.chess.move(san);
  finishIfOver(game);
  return san;
}

export function outcomeText(game) {
  if (game.forfeit !== null) return `${SIDES[game.forfeit]} forfeits`;
  if (!game.result) return "";
  if (game.result[0] === game.result[1]) return `draw (${game.reason})`;
  return `${game.result[0] > 0 ? "white" : "black"} wins (${game.reason})`;
}

/** Who speaks next: the actor of the side to move, or null when the game is over. */
export function nextActor(game) {
  return game.result ? null : game.players[sideToMove(game)];
}

/** Lets the random player move while it is its turn (at the start, when it plays white). */
export function letRandomMove(game) {
  const played = [];
  while (!game.result && game.players[sideToMove(game)] === null) played.push(`${SIDES[sideToMove(game)]} plays ${playRandom(game)}`);
  return played;
}

/**
 * The actor of the side to move said `text`. Returns the environment's reply. An illegal or unreadable
 * move forfeits the game on the spot; reaching `maxActorMoves` legal moves of one actor ends it as a draw.
 */
export function actorMoves(game, text) {
  const side = sideToMove(game);
  const byIndex = game.settings.moveFormat === "index";
  const word = byIndex ? findIndex(text) : findMove(text);
  const legal = byIndex ? game.chess.moves() : null;
  const san = word === null ? null : byIndex ? (Number(word) < legal.length ? tryMove(game.chess, legal[Number(word)]) : null) : tryMove(game.chess, word);
  if (san === null) {
    game.forfeit = side;
    game.result = side === 0 ? [-1, 0] : [0, -1];
    game.reason = word === null ? "no move" : byIndex ? `move ${word} is not in the list (0-${legal.length - 1})` : `illegal move ${word}`;
    return `${game.reason}: ${outcomeText(game)}. ${board(game)}`;
  }
  game.legalMoves[side] += 1;
  finishIfOver(game);
  const said = letRandomMove(game);
  if (!game.result && game.settings.maxActorMoves && game.legalMoves[side] >= game.settings.maxActorMoves) cutOff(game);
  const prefix = said.length > 0 ? `${said.join(". ")}. ` : "";
  return game.result ? `${prefix}${board(game)} ${outcomeText(game)}` : `${prefix}${board(game)}`;
}

/** The game reached its move cap: a draw, or (cutoff "material") won by the side ahead in material. */
function cutOff(game) {
  const cap = `cut off after ${game.settings.maxActorMoves} moves`;
  if (game.settings.cutoff !== "material") {
    game.result = [0, 0];
    game.reason = cap;
    return;
  }
  const [white, black] = material(game.chess);
  game.result = white === black ? [0, 0] : white > black ? [1, -1] : [-1, 1];
  game.reason = `${cap}, material ${white}-${black}`;
}

/** Rewards per actor (component `game`: win 1, draw 0, loss -1; `legal_moves`: the bonus per legal move). */
export function rewards(game) {
  const out = {};
  game.players.forEach((name, side) => {
    if (name === null || !game.result) return;
    const entry = out[name] ?? { game: 0 };
    entry.game += game.result[side];
    if (game.settings.legalMoveReward) entry.legal_moves = (entry.legal_moves ?? 0) + game.settings.legalMoveReward * game.legalMoves[side];
    out[name] = entry;
  });
  return out;
}
