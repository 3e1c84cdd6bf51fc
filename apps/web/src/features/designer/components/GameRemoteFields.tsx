"use client";

import { NumberField, SelectField, TextField } from "./fields";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Draft = Record<string, any>;

const GAMES = [
  { value: "tic_tac_toe", label: "Tic-tac-toe (cells 1-9)" },
  { value: "connect_four", label: "Connect four (columns 1-7)" },
  { value: "chess", label: "Chess (SAN or coordinates; chess.js)" },
] as const;
const OPPONENTS = [
  { value: "random", label: "The built-in random player (one actor)" },
  { value: "actors", label: "The actors (two seats: two actors, or one actor in both through Roles: self-play)" },
] as const;
const SIDES = ["first", "second", "alternate"] as const;

/** What a grpc:// url asks of the runner (contracts RUNNER_REQUIREMENTS "grpc"). */
export const GRPC_URL_NOTE = 'gRPC: the runner needs grpcio and protobuf (pip install "troupe[grpc]"); a launch is refused while no live runner has them.';

/**
 * The settings of `game` and `remote` environments (gpu-runtime/src/troupe/games, troupe/remote):
 * shown only for those kinds; `issues` are keyed by paths relative to the environment.
 * `grpcUnavailable`: why no live runner can call a grpc:// url now (null: some can, or none has reported).
 */
export function GameRemoteFields(props: {
  kind: string;
  draft: Draft;
  set(key: string, value: unknown): void;
  issues: Record<string, string>;
  grpcUnavailable?: string | null;
  /** Why no live runner can play chess now (no Node.js with chess.js); null: some can, or none has reported. */
  chessUnavailable?: string | null;
}) {
  const { kind, draft, set, issues, grpcUnavailable, chessUnavailable } = props;
  if (kind === "game") {
    const game: Draft = draft.game ?? {};
    const put = (key: string, value: unknown) => set("game", { ...game, [key]: value });
    return (
      <fieldset data-testid="game-fields">
        <legend>Game</legend>
        <div className="form-grid">
          <SelectField
            label="Game"
            value={game.name}
            defaultValue="tic_tac_toe"
            options={GAMES}
            onChange={(v) => put("name", v)}
            error={issues["game.name"]}
            unavailable={chessUnavailable ? { chess: chessUnavailable } : undefined}
          />
          {game.name === "chess" && (
            <SelectField
              label="Board in the transcript"
              value={game.board}
              defaultValue="fen"
              options={["fen", "ascii"] as const}
              onChange={(v) => put("board", v)}
              error={issues["game.board"]}
              hint="fen: one compact line; ascii: chess.js's 8-line diagram."
            />
          )}
          <label className="checkbox">
            <input type="checkbox" checked={game.showLegalMoves === true} onChange={(e) => put("showLegalMoves", e.target.checked || undefined)} />
            List the legal moves under every board ({game.name === "chess" ? "SAN" : "cell or column numbers"})
          </label>
          <SelectField
            label="Opponent"
            value={game.opponent}
            defaultValue="random"
            options={OPPONENTS}
            onChange={(v) => put("opponent", v)}
            error={issues["game.opponent"]}
            hint="The game speaks between moves (board and replies); a message with no legal move forfeits (-1)."
          />
          {(game.opponent ?? "random") === "random" && (
            <SelectField
              label="The actor plays"
              value={game.actorPlays}
              defaultValue="first"
              options={SIDES}
              onChange={(v) => put("actorPlays", v)}
              error={issues["game.actorPlays"]}
              hint="X moves first; alternate: odd samples of a group move second."
            />
          )}
          <NumberField
            label="Reward per legal move"
            value={game.legalMoveReward}
            placeholder={0}
            onChange={(v) => put("legalMoveReward", v)}
            error={issues["game.legalMoveReward"]}
            hint="Shaping while a model learns what a move looks like. Results: win 1, draw 0, loss -1."
          />
        </div>
      </fieldset>
    );
  }
  if (kind === "remote") {
    const remote: Draft = draft.remote ?? {};
    const put = (key: string, value: unknown) => set("remote", { ...remote, [key]: value });
    return (
      <fieldset data-testid="remote-fields">
        <legend>Remote environment</legend>
        <div className="form-grid">
          <TextField
            label="URL"
            value={draft.url}
            placeholder="http://envhost:8100 or grpc://envhost:8101"
            onChange={(v) => set("url", v)}
            error={issues.url}
            hint="A server of the reset/step protocol, reachable from the runner: JSON over HTTP (http://, https://) or gRPC (grpc://host:port, the service in troupe_remote.proto). python -m troupe.envserver module:Class serves either."
          />
          {typeof draft.url === "string" && draft.url.startsWith("grpc://") && (
            <span className="hint muted small" data-testid="remote-grpc-note">
              {grpcUnavailable ?? GRPC_URL_NOTE}
            </span>
          )}
          <NumberField label="Timeout per call (s)" value={remote.timeoutSeconds} placeholder={30} onChange={(v) => put("timeoutSeconds", v)} error={issues["remote.timeoutSeconds"]} />
          <NumberField
            label="Failure score"
            value={remote.failureScore}
            placeholder={0}
            onChange={(v) => put("failureScore", v)}
            error={issues["remote.failureScore"]}
            hint="A call that times out, fails or answers garbage ends that episode: logged, trains nothing, scores this."
          />
        </div>
      </fieldset>
    );
  }
  return null;
}
