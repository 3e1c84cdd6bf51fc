"""Small helpers the detectors share: metric series over a window, the baseline, answer statistics."""

from __future__ import annotations

import math
from collections import Counter
from typing import Iterable, Sequence

from .types import StepRecord


def last(history: Sequence[StepRecord], n: int) -> Sequence[StepRecord]:
    return history[-n:] if n > 0 else history[:0]


def series(history: Iterable[StepRecord], name: str) -> list[tuple[int, float]]:
    return [(r.step, r.metrics[name]) for r in history if name in r.metrics]


def mean(values: Iterable[float]) -> float:
    vs = list(values)
    return sum(vs) / len(vs) if vs else math.nan


def windowed(history: Sequence[StepRecord], name: str, window: int) -> tuple[list[tuple[int, float]], list[tuple[int, float]]] | None:
    """(baseline, recent): the first `window` and the last `window` values of a metric, when the two do not
    overlap (a run shorter than two windows has no verdict yet)."""
    points = series(history, name)
    if len(points) < 2 * window:
        return None
    return points[:window], points[-window:]


def char_entropy(texts: Sequence[str]) -> float:
    """Shannon entropy (bits per character) of the characters of the texts, spaces left out."""
    chars = Counter(ch for t in texts for ch in t if not ch.isspace())
    n = sum(chars.values())
    if n == 0:
        return math.nan
    return -sum(c / n * math.log2(c / n) for c in chars.values())


def dominant_char(texts: Sequence[str]) -> tuple[str, float]:
    """The most common non-space character over all the texts and its share of their characters."""
    chars = Counter(ch for t in texts for ch in t if not ch.isspace() and ch != "|")
    total = sum(chars.values())
    if total == 0:
        return "", 0.0
    ch, count = chars.most_common(1)[0]
    return ch, count / total


def steps_label(first: int, last_: int) -> str:
    return f"step {first}" if first == last_ else f"steps {first}-{last_}"
