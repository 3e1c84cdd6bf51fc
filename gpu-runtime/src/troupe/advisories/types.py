"""The health advisories' vocabulary: what one step of one actor looked like, what a detector found, the settings.

Detectors (detectors/) are pure functions of an actor's recent `StepRecord`s and the settings; the
monitor (monitor.py) builds the records from the run's own events and emits what the detectors find.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["info", "warning", "critical"]


@dataclass(frozen=True)
class EpisodeView:
    """One transcript as an advisory sees it: where it is (to cite it) and what this actor said in it."""

    step: int
    environment: str
    group: int
    sample: int
    reward: float
    datasetRow: int | None
    #: This actor's own (trained) messages in the episode, in order.
    completions: tuple[str, ...]
    #: The prompt (the dataset's `user` message), to tell prompts apart; "" when there is none.
    prompt: str = ""

    @property
    def prompt_key(self) -> tuple:
        return (self.environment, self.prompt) if self.prompt else (self.environment, self.datasetRow, self.step, self.group)

    @property
    def text(self) -> str:
        return " | ".join(self.completions)

    def ref(self, with_sample: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"step": self.step, "environment": self.environment, "group": self.group}
        if with_sample:
            out["sample"] = self.sample
        return out


@dataclass(frozen=True)
class StepRecord:
    """One actor at one step: its metric values (every metric event of the step merged, eval included),
    the names that were NaN/inf, and its transcripts of the step (the episodes the run recorded)."""

    step: int
    metrics: dict[str, float] = field(default_factory=dict)
    non_finite: tuple[str, ...] = ()
    episodes: tuple[EpisodeView, ...] = ()


@dataclass(frozen=True)
class Finding:
    """What a detector reports: turned into an `advisory` event (contracts `AdvisoryEvent`)."""

    severity: Severity
    summary: str
    from_step: int
    to_step: int
    hint: str
    values: dict[str, float] = field(default_factory=dict)
    episodes: tuple[dict[str, Any], ...] = ()
    examples: tuple[str, ...] = ()

    def evidence(self) -> dict[str, Any]:
        return {
            "summary": self.summary[:2000],
            "fromStep": self.from_step,
            "toStep": self.to_step,
            "values": {k: round(float(v), 6) for k, v in self.values.items()},
            "episodes": list(self.episodes[:20]),
            "examples": [e[:200] for e in self.examples[:5]],
        }


@dataclass(frozen=True)
class AdvisorySettings:
    """Thresholds, with the defaults a run gets (the RunSpec has no section for them yet: these are the
    documented constants; `Advisor(settings=...)` overrides them for library users and tests).

    Every windowed check looks at the last `window` steps an actor reported and compares against its
    first `window` steps (its baseline) where it says so.
    """

    #: Steps per window (and the steps of baseline at the start of a run).
    window: int = 5
    # collapse: the same answer whatever the prompt
    #: A character "dominates" a prompt's answers when it is at least this share of their characters...
    collapse_dominant_char_share: float = 0.6
    #: ...and it is collapse when one character dominates the answers of at least this share of the window's
    #: prompts (at least 3 different prompts).
    collapse_prompt_share: float = 0.6
    #: Share of the window's transcripts whose exact answer was also given to a different prompt.
    collapse_cross_prompt_share: float = 0.5
    #: Mean per-group answer entropy at most this fraction of the baseline's (when a baseline exists).
    collapse_entropy_ratio: float = 0.5
    # zero-variance groups: every sample of a GRPO group got the same reward, so its advantages are 0
    zero_variance_share: float = 0.5
    # entropy collapse: the policy's mean token entropy (metric `entropy`)
    entropy_ratio: float = 0.2
    entropy_floor: float = 0.02
    # length explosion and truncation
    length_growth: float = 3.0
    truncation_share: float = 0.5
    # KL blow-up (metric `kl`, per token)
    kl_max: float = 1.0
    # reward hacking: train reward up while the held-out (eval) reward goes down
    hacking_evals: int = 3
    hacking_eval_drop: float = 0.05
    hacking_train_rise: float = 0.05
    # staleness beyond K updates (metric `staleness/max`); None: the spec's algorithm.async.maxStaleness
    staleness_max: int | None = None
    # an actor that stopped changing: grad_norm at most this for a whole window
    stalled_grad_norm: float = 1e-8
