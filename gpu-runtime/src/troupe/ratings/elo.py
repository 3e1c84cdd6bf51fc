"""Elo ratings from game results: a Bradley-Terry maximum-likelihood fit on the Elo scale.

Why a fit and not the running Elo update (r += K * (score - expected)): the running update depends on the order
games are played in and on K; the ratings here are recomputed at each checkpoint over every game played so far,
so the same games give the same ratings whatever their order, and an old snapshot's rating sharpens as it plays
more. The scale is Elo's: a player rated D points above another is expected to score

    E = 1 / (1 + 10 ** (-D / 400))          (400 points: odds 10 to 1; base 10, scale 400)

A draw counts as half a win for each side (Elo's score 0.5). One player, the anchor (the uniformly random
player), is fixed at 1000; every other rating is relative to it.

Prior: each rated player gets `prior_draws` virtual draws against the anchor (default 1). Without it a player
that won or lost every game has no finite maximum (an untrained model forfeiting every game would be rated
-infinity); with it such a player sits a finite, honest distance below or above the anchor, pulled toward 1000
in proportion to how few games it played.

Uncertainty: the inverse of the Fisher information (the negative Hessian of the log-likelihood at the fit),
so `ci95` is 1.96 standard errors in Elo points: the interval a normal approximation gives, wide when a player
played few games or only against opponents it always beats or always loses to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

ELO_SCALE = 400.0  # Elo points per factor of 10 in the odds
ANCHOR_RATING = 1000.0
_THETA = math.log(10.0) / ELO_SCALE  # Elo points -> natural log-odds units


@dataclass(frozen=True)
class Game:
    """One finished game: `score` is what `first` scored against `second` (1 win, 0.5 draw, 0 loss)."""

    first: str
    second: str
    score: float


@dataclass(frozen=True)
class Rating:
    rating: float
    ci95: float  # 1.96 standard errors, Elo points (0 for the anchor, which is fixed)
    games: int  # real games played (virtual prior draws not counted)


def expected_score(rating: float, opponent: float) -> float:
    """Elo's expected score of a player rated `rating` against one rated `opponent`."""
    return 1.0 / (1.0 + 10.0 ** ((opponent - rating) / ELO_SCALE))


def rating_from_score(score: float, opponent: float = ANCHOR_RATING) -> float:
    """The rating whose expected score against `opponent` is `score` (0 < score < 1): the inverse of `expected_score`."""
    return opponent + ELO_SCALE * math.log10(score / (1.0 - score))


def fit_ratings(games: Sequence[Game], anchor: str, prior_draws: float = 1.0, iterations: int = 100) -> dict[str, Rating]:
    """Every player's rating from `games` (Newton's method on the concave log-likelihood, the anchor fixed).

    Players that never met the anchor, even through others, are still finite thanks to the prior draws."""
    players = sorted({g.first for g in games} | {g.second for g in games} | {anchor})
    free = [p for p in players if p != anchor]
    index = {p: k for k, p in enumerate(free)}
    played = {p: 0 for p in players}
    rows: list[tuple[int, int, float, float]] = []  # (i, j, score of i, weight); index -1 is the anchor
    for g in games:
        if not 0.0 <= g.score <= 1.0:
            raise ValueError(f"a game's score is 0, 0.5 or 1 (between 0 and 1), got {g.score}")
        if g.first == g.second:
            raise ValueError(f"a player cannot play itself ({g.first})")
        rows.append((index.get(g.first, -1), index.get(g.second, -1), g.score, 1.0))
        played[g.first] += 1
        played[g.second] += 1
    if prior_draws > 0:
        rows.extend((k, -1, 0.5, prior_draws) for k in range(len(free)))
    if not free:
        return {anchor: Rating(ANCHOR_RATING, 0.0, played[anchor])}
    i = np.array([r[0] for r in rows])
    j = np.array([r[1] for r in rows])
    s = np.array([r[2] for r in rows])
    w = np.array([r[3] for r in rows])
    theta = np.zeros(len(free) + 1)  # the last entry is the anchor, fixed at 0 (index -1 reaches it)
    n = len(free)
    hessian = np.eye(n)
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(theta[j] - theta[i]))
        residual = w * (s - p)
        curvature = w * p * (1.0 - p)
        grad = np.zeros(n + 1)
        np.add.at(grad, i, residual)
        np.add.at(grad, j, -residual)
        hessian = np.zeros((n + 1, n + 1))
        np.add.at(hessian, (i, i), curvature)
        np.add.at(hessian, (j, j), curvature)
        np.add.at(hessian, (i, j), -curvature)
        np.add.at(hessian, (j, i), -curvature)
        hessian = hessian[:n, :n]
        step = np.linalg.solve(hessian, grad[:n])
        step = np.clip(step, -2.0, 2.0)  # damped: far-off starts (lopsided records) cannot overshoot
        theta[:n] += step
        if np.max(np.abs(step)) < 1e-10:
            break
    covariance = np.linalg.inv(hessian)
    out = {anchor: Rating(ANCHOR_RATING, 0.0, played[anchor])}
    for p, k in index.items():
        se = math.sqrt(max(covariance[k, k], 0.0)) / _THETA
        out[p] = Rating(float(ANCHOR_RATING + theta[k] / _THETA), 1.96 * se, played[p])
    return out
