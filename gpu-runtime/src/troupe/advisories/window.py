"""Small helpers the detectors share: metric series over a window, the baseline, answer statistics."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

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


@dataclass(frozen=True)
class EvalTrend:
    """The last evaluations of a metric, each moving the same way, and a training metric's mean over the window
    ending at the first and at the last of them."""

    first_step: int
    last_step: int
    eval_start: float
    eval_end: float
    train_before: float
    train_after: float


def eval_trend(
    history: Sequence[StepRecord], eval_metric: str, train_metric: str, evals: int, window: int, breaks: Callable[[float, float], bool]
) -> EvalTrend | None:
    """None when there are fewer than `evals` values of `eval_metric`, or two of the last ones in a row that
    `breaks(previous, next)` the trend, or no training value in the window at either end; else the trend, with the
    training metric around its ends (overfitting: eval loss up while the loss falls; reward hacking: eval reward
    down while the reward rises)."""
    points = series(history, eval_metric)
    if len(points) < evals:
        return None  # the verdict of the latest evaluations holds until the next one
    recent = points[-evals:]
    if any(breaks(a[1], b[1]) for a, b in zip(recent, recent[1:])):
        return None
    train = series(history, train_metric)

    def train_near(step: int) -> float:
        return mean(v for s, v in train if step - window < s <= step)

    first, last_step = recent[0][0], recent[-1][0]
    before, after = train_near(first), train_near(last_step)
    if not (math.isfinite(before) and math.isfinite(after)):
        return None
    return EvalTrend(first, last_step, recent[0][1], recent[-1][1], before, after)
