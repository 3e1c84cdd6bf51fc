"""Elo math (troupe/ratings/elo.py) against values computed by hand.

Elo scale: E = 1 / (1 + 10^(-D/400)). A Bradley-Terry fit of one player against the anchor alone has the closed
form r = 1000 + 400 log10(s / (1 - s)), s its mean score; its standard error is 1 / sqrt(n s (1 - s)) log-odds
units, times 400 / ln 10 in Elo points."""

import math
import random

import pytest

from troupe.ratings.elo import Game, expected_score, fit_ratings, rating_from_score

ELO_PER_LOGODDS = 400 / math.log(10)


def test_expected_score_by_hand():
    assert expected_score(1000, 1000) == 0.5
    assert expected_score(1400, 1000) == pytest.approx(10 / 11)  # 400 points: odds 10 to 1
    assert expected_score(1000, 1400) == pytest.approx(1 / 11)
    assert expected_score(1200, 1000) == pytest.approx(1 / (1 + 10 ** -0.5))  # 0.7597
    assert rating_from_score(0.75) == pytest.approx(1000 + 400 * math.log10(3))  # 1190.85
    assert rating_from_score(expected_score(1234.5, 1000)) == pytest.approx(1234.5)


def test_three_wins_one_loss_against_the_anchor_without_prior():
    games = [Game("a", "random", 1.0)] * 3 + [Game("a", "random", 0.0)]
    r = fit_ratings(games, "random", prior_draws=0)
    assert r["random"].rating == 1000 and r["random"].ci95 == 0
    assert r["a"].rating == pytest.approx(1190.8485, abs=1e-3)
    se = 1 / math.sqrt(4 * 0.75 * 0.25) * ELO_PER_LOGODDS  # 200.59
    assert r["a"].ci95 == pytest.approx(1.96 * se, rel=1e-6)  # 393.16
    assert r["a"].games == 4 and r["random"].games == 4


def test_draws_count_half_and_sides_do_not_matter():
    # a as second player: scores are the first player's, so random scoring 0.25 is a scoring 0.75
    games = [Game("random", "a", 0.0), Game("random", "a", 0.5), Game("random", "a", 0.5)]
    r = fit_ratings(games, "random", prior_draws=0)
    assert r["a"].rating == pytest.approx(rating_from_score(2 / 3), abs=1e-6)  # (1 + 0.5 + 0.5) / 3


def test_prior_draws_keep_a_player_who_lost_everything_finite():
    r = fit_ratings([Game("a", "random", 0.0)] * 20, "random")  # one virtual draw: score 0.5 / 21
    assert r["a"].rating == pytest.approx(1000 + 400 * math.log10(0.5 / 20.5), abs=1e-3)  # 354.89
    assert r["a"].games == 20


def test_a_chain_fits_each_link_exactly():
    # a 3:1 against the anchor, then b 3:1 against a: a tree of pairings, so each link is its own closed form
    games = [Game("a", "random", 1.0)] * 3 + [Game("a", "random", 0.0)] + [Game("b", "a", 1.0)] * 3 + [Game("b", "a", 0.0)]
    r = fit_ratings(games, "random", prior_draws=0)
    assert r["a"].rating == pytest.approx(1190.8485, abs=1e-3)
    assert r["b"].rating == pytest.approx(1381.6970, abs=1e-3)
    # b never met the anchor: its error adds a's (variances add along the chain)
    se = 1 / math.sqrt(4 * 0.75 * 0.25) * ELO_PER_LOGODDS
    assert r["b"].ci95 == pytest.approx(1.96 * math.sqrt(2) * se, rel=1e-6)


def test_order_of_games_does_not_change_ratings():
    rng = random.Random(0)
    games = [Game(*rng.sample(["random", "a", "b", "c"], 2), rng.choice([0.0, 0.5, 1.0])) for _ in range(200)]
    first = fit_ratings(games, "random")
    rng.shuffle(games)
    again = fit_ratings(games, "random")
    for name, rating in first.items():
        assert again[name].rating == pytest.approx(rating.rating, abs=1e-6)
        assert again[name].ci95 == pytest.approx(rating.ci95, abs=1e-6)


def test_bad_games_are_refused():
    with pytest.raises(ValueError, match="score"):
        fit_ratings([Game("a", "random", 2.0)], "random")
    with pytest.raises(ValueError, match="itself"):
        fit_ratings([Game("a", "a", 1.0)], "random")
    assert fit_ratings([], "random") == {"random": fit_ratings([], "random")["random"]}
