"""Rating games (troupe/ratings/match.py): what the players see, forfeits, scores, and the calibration of the
whole path: a player that moves uniformly at random (a stand-in engine, not a model) is rated 1000 within its CI."""

import re
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from troupe.models.tokenizer import CharTokenizer
from troupe.ratings.elo import Game, fit_ratings
from troupe.ratings.fixed_players import FIXED_PLAYERS
from troupe.ratings.match import FixedSide, ModelSide, play_games

TOK = CharTokenizer()
BOARD = re.compile(r"[XO.]{3}/[XO.]{3}/[XO.]{3}")


class RandomLegalStandIn:
    """A stand-in engine (no model): reads the last tic-tac-toe board of its context and names a uniformly random
    empty cell; remembers every context it was given."""

    def __init__(self, seed: int, reply: str | None = None):
        self.rng = np.random.default_rng(seed)
        self.reply = reply
        self.contexts: list[str] = []

    def generate(self, prompts, sampling):
        texts = []
        for p in prompts:
            text = TOK.decode(p.token_ids)
            self.contexts.append(text)
            cells = BOARD.findall(text)[-1].replace("/", "")
            empty = [k + 1 for k, c in enumerate(cells) if c == "."]
            texts.append(self.reply if self.reply is not None else str(empty[int(self.rng.integers(len(empty)))]))
        return SimpleNamespace(texts=texts)


def side(key, engine, actor="alice", system=None):
    return ModelSide(key, actor, engine, TOK, {"temperature": 1.0, "maxNewTokens": 1}, system)


RANDOM = FixedSide("random", FIXED_PLAYERS["random"])
FIRST = FixedSide("first_move", FIXED_PLAYERS["first_move"])


def test_the_model_sees_the_game_as_the_environment_shows_it():
    engine = RandomLegalStandIn(0)
    scores = play_games("tic_tac_toe", [(FIRST, side("alice@2", engine, system="You play."))], np.random.default_rng(0), 5)
    first = engine.contexts[0]
    assert first == "You play.\ntic_tac_toe (1-9, row by row): alice is O. X plays 1. X../.../...\nalice:"
    assert "\ngame:X plays 2. " in engine.contexts[1]  # the scripted player's reply after alice's move
    assert scores[0] in (0.0, 0.5, 1.0)


def test_an_unreadable_move_forfeits_and_scores_zero_for_its_side():
    talker = RandomLegalStandIn(0, reply="hello")
    scores = play_games("tic_tac_toe", [(side("a", talker), RANDOM), (RANDOM, side("a", talker))], np.random.default_rng(0), 5)
    assert scores == [0.0, 1.0]  # X forfeits: 0; O forfeits: X scores 1


def test_fixed_players_only_and_a_turn_limit_draws():
    rng = np.random.default_rng(1)
    # first_move against itself: X takes 1, O 2, X 3, O 4, X 5, O 6, X 7: X wins on the diagonal 3-5-7
    assert play_games("tic_tac_toe", [(FIRST, FixedSide("first_move'", FIXED_PLAYERS["first_move"]))], rng, 5) == [1.0]
    engine = RandomLegalStandIn(0)
    assert play_games("tic_tac_toe", [(side("a", engine), side("b", RandomLegalStandIn(1), actor="bob"))], rng, 1) == [0.5]


def test_a_random_legal_player_is_rated_1000_within_its_ci():
    engine = RandomLegalStandIn(7)
    pairings = [(side("me", engine), RANDOM) if k % 2 == 0 else (RANDOM, side("me", engine)) for k in range(400)]
    scores = play_games("tic_tac_toe", pairings, np.random.default_rng(7), 5)
    r = fit_ratings([Game(x.key, o.key, s) for (x, o), s in zip(pairings, scores)], "random")["me"]
    # 400 games: the CI is about +-40 Elo points; random against random is 1000 in expectation
    assert r.ci95 < 50
    assert abs(r.rating - 1000) < r.ci95, (r.rating, r.ci95)


def test_pairings_each_current_player_against_every_other_once_sides_alternating():
    from troupe.ratings.rater import _pairings

    a, b = side("alice@4", None), side("bob@4", None, actor="bob")
    snap = side("alice@2", None)
    pairs = [(x.key, o.key) for x, o in _pairings([a, b], [RANDOM, snap], 2)]
    assert pairs == [
        ("alice@4", "bob@4"), ("bob@4", "alice@4"),
        ("alice@4", "random"), ("random", "alice@4"),
        ("alice@4", "alice@2"), ("alice@2", "alice@4"),
        ("bob@4", "random"), ("random", "bob@4"),
        ("bob@4", "alice@2"), ("alice@2", "bob@4"),
    ]  # fmt: skip
