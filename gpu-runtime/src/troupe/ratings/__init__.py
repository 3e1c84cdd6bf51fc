"""Elo ratings per checkpoint for game environments (rater.py), from a Bradley-Terry fit (elo.py) against
fixed opponents (fixed_players.py), played as the game environment plays (match.py)."""

from .elo import Game, Rating, expected_score, fit_ratings, rating_from_score
from .rater import Rater
from .settings import RatingSettings

__all__ = ["Game", "Rater", "Rating", "RatingSettings", "expected_score", "fit_ratings", "rating_from_score"]
