"""Learning check (issue #27): tic-tac-toe self-play with ONE policy in both roles (`roles: {X: policy, O: policy}`)
and `algorithm.advantage: "rae"` (a moving baseline per role), then the trained policy against a uniformly random
legal player (a scripted opponent outside the learner): 200 games as X and 200 as O.

The bar: it wins or draws >= 80 % of its games on each side, with <= 5 % forfeits. Chance, for scale: a uniformly
random legal player wins or draws about 71 % of its games as X against another (58 % wins + 13 % draws) and about
42 % as O, and never forfeits; the tiny untrained model forfeits almost every game (its one sampled character is
rarely a legal cell), so it wins or draws next to none. The untrained figures are printed beside the trained ones.

Fixed seed; the probe plays each side in one sampling pass of the checkpointed policy (1 step, the update after the
games it reports). Its seat is a role named as in self-play (`roles: {X: policy}`, `{O: policy}`), so the random
player sits in the other seat and its moves are that seat's turns: the policy reads, token for token, the context it
trained on (envs/games/environment.py; before, the probe named the seat "policy", a context never trained on).

NOT REACHED: measured on a 2-core CPU shared with other jobs (load 4-6), seed 3, tiny-char-2l, lr 3e-3, groupSize 4,
8 prompts a step, legalMoveReward 0.2, showLegalMoves: untrained as X win-or-draw 0.00 with 1.00 forfeits, as O 0.00
with 0.995; after 300 steps (1242 s of training under that load) X 0.085 / 0.83 forfeit, O 0.05 / 0.815. In self-play
the forfeits fall within 40 steps and then hold: X 0.76 -> 0.47, O 0.24 -> 0.49 (steps 1-20 -> 281-300); entropy
4.05 -> 2.11 nats, about ln 8: the policy learned to write a digit and picks one nearly uniformly, blind to the board
(the same plateau over 200 steps with empty cells drawn as their numbers instead; with the bare board and no list, 600 steps brought X's
self-play forfeits only to 0.46). Why, from a batch checked by hand (the RAE advantages match reward - baseline,
baseline 0.95 * b + 0.05 * the step's mean): the advantage is the episode's, given to every move of the role, so a
legal move followed by the same player's forfeit is pushed down as hard as the forfeit (X "5" then "C": both -0.75),
and nearly every game still ends in some forfeit; the contrast that would teach "copy a listed cell" is faint. The bar
needs per-move credit (or far more steps) first. So the check runs only when asked (TROUPE_SELFPLAY_CHECK=1, steps
by TROUPE_SELFPLAY_STEPS): it is not tuned down to pass, and CI does not spend minutes on a known failure. Its skip
reason says so in CI's `-rs` output.
"""

import os
import time
from pathlib import Path

import numpy as np
import pytest
from runtime_helpers import TEST_THREADS

from troupe import EventWriter, run_spec

STEPS = int(os.environ.get("TROUPE_SELFPLAY_STEPS", "300"))
GAMES_PER_SIDE = 200
GROUP = 4


def actor(model: dict) -> dict:
    return {
        "name": "policy",
        "model": model,
        "trainable": True,
        "training": {"learningRate": 3e-3},
        "sampling": {"temperature": 1.0, "maxNewTokens": 1},  # one character: a cell, or anything else (a forfeit)
    }


def base_spec(name: str, model: dict, environments: list[dict], trainer: dict) -> dict:
    return {
        "specVersion": 1,
        "name": name,
        "seed": 3,
        "actors": [actor(model)],
        "datasets": [{"name": "rows", "source": {"kind": "builtin", "name": "echo_letter", "size": 64}}],
        "rewards": [],
        "environments": [
            {"dataset": "rows", "actors": ["policy"], "maxTurns": 9, "prompt": {"field": "prompt", "applyChatTemplate": False}, "kind": "game", **e}
            for e in environments
        ],
        "algorithm": {"name": "grpo", "groupSize": GROUP, "advantage": "rae"},
        "trainer": {"cpuThreads": TEST_THREADS, "device": "cpu", **trainer},
    }


# showLegalMoves: the legal moves under every board, so a one-character model can copy a legal cell instead of counting
# dots (with the bare board, 600 steps were spent on writing a digit at all; with the list, about 40).
GAME = {"name": "tic_tac_toe", "legalMoveReward": 0.2, "showLegalMoves": True}
SELF_PLAY = {"name": "selfplay", "roles": {"X": "policy", "O": "policy"}, "game": {**GAME, "opponent": "actors"}}
TINY = {"source": "tiny", "preset": "tiny-char-2l"}


def probe(model: dict, work_dir: Path) -> dict[str, dict[str, float]]:
    """The policy's games against the random player as X and as O, counted from the step's transcripts."""
    # The seat is a role named as in self-play, so the random player sits in the other seat and the policy reads the
    # context it trained on (envs/games/environment.py).
    sides = [
        {"name": f"as_{side}", "roles": {side: "policy"}, "game": {**GAME, "opponent": "random", "actorPlays": plays}}
        for side, plays in (("X", "first"), ("O", "second"))
    ]
    per_env = GAMES_PER_SIDE // GROUP
    spec = base_spec("probe", model, sides, {"steps": 1, "promptsPerStep": 2 * per_env, "episodesPerStep": 2 * GAMES_PER_SIDE})
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=work_dir)
    assert result.state == "succeeded", result.message
    out = {}
    for env in ("as_X", "as_O"):
        games = [e for e in result.events if e["type"] == "episode" and e["environment"] == env]
        assert len(games) == GAMES_PER_SIDE, len(games)
        scores = np.array([g["rewardComponents"]["game"] for g in games])
        forfeits = np.array(["forfeits" in g["messages"][-1]["content"] and scores[k] < 0 for k, g in enumerate(games)])
        out[env] = {"win_or_draw": float(np.mean(scores >= 0)), "win": float(np.mean(scores > 0)), "forfeit": float(np.mean(forfeits))}
    return out


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("TROUPE_SELFPLAY_CHECK") != "1",
    reason="self-play bar not reached yet (300 steps, seat-named probe: X win-or-draw 0.085 with 0.83 forfeits, O 0.05 with 0.815; bar 0.80 and 0.05; the policy picks digits blind to the board): TROUPE_SELFPLAY_CHECK=1 runs it",
)
def test_self_play_in_both_roles_beats_the_random_player(tmp_path):
    t0 = time.monotonic()
    untrained = probe(TINY, tmp_path / "probe_untrained")
    train = base_spec("self-play", TINY, [SELF_PLAY], {"steps": STEPS, "promptsPerStep": 8, "checkpointEvery": STEPS, "episodesPerStep": 0})
    result = run_spec(train, events=EventWriter(keep=True), work_dir=tmp_path / "train")
    assert result.state == "succeeded", result.message
    curve = [e["values"] for e in result.events if e["type"] == "metric" and "role/X/game/forfeit" in e["values"]]
    trained = probe({"source": "run", "runId": "train", "step": STEPS}, tmp_path / "probe_trained")
    seconds = time.monotonic() - t0
    report = (
        f"{STEPS} steps, {seconds:.0f} s; untrained {untrained}; trained {trained}; self-play forfeits X/O first 10 steps "
        f"{np.mean([c['role/X/game/forfeit'] for c in curve[:10]]):.2f}/{np.mean([c['role/O/game/forfeit'] for c in curve[:10]]):.2f}, "
        f"last 10 {np.mean([c['role/X/game/forfeit'] for c in curve[-10:]]):.2f}/{np.mean([c['role/O/game/forfeit'] for c in curve[-10:]]):.2f}"
    )
    print(report)
    for side in ("as_X", "as_O"):
        assert trained[side]["forfeit"] <= 0.05, report
        assert trained[side]["win_or_draw"] >= 0.80, report
