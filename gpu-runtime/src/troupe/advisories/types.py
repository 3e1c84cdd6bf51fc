"""The health advisories' vocabulary: what one step of one actor looked like, what a detector found, the settings.

Detectors (detectors/) are pure functions of an actor's recent `StepRecord`s and the settings; the
monitor (monitor.py) builds the records from the run's own events and emits what the detectors find.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Literal

from ..spec.runspec_types import RunSpec

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
    """Thresholds, with the defaults a run gets: the RunSpec's `trainer.advisories` (contracts
    advisorySettings.ts) maps onto these fields, `section.field` onto `section_field` in snake case
    (`collapse.dominantCharShare` -> `collapse_dominant_char_share`), so each setting names its detector.
    `Advisor(settings=...)` takes them directly (library users, tests).

    Every windowed check looks at the last `window` steps an actor reported and compares against its
    first `window` steps (its baseline) where it says so.
    """

    #: false: no advisory is computed.
    enabled: bool = True
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
    zero_variance_groups_share: float = 0.5
    # entropy collapse: the policy's mean token entropy (metric `entropy`)
    entropy_collapse_ratio: float = 0.2
    entropy_collapse_floor: float = 0.02
    # length explosion and truncation
    length_explosion_growth: float = 3.0
    truncation_share: float = 0.5
    # KL blow-up (metric `kl`, per token)
    kl_blowup_max: float = 1.0
    # reward hacking: train reward up while the held-out (eval) reward goes down
    reward_hacking_evals: int = 3
    reward_hacking_eval_drop: float = 0.05
    reward_hacking_train_rise: float = 0.05
    # staleness beyond K updates (metric `staleness/max`); None: the spec's algorithm.async.maxStaleness
    staleness_max: int | None = None
    # an actor that stopped changing: grad_norm at most this for a whole window
    actor_stalled_grad_norm: float = 1e-8
    # offline learners (sft, dpo)
    #: The loss's last window must be at least this fraction below its first window's.
    loss_not_falling_min_relative_drop: float = 0.05
    #: A step's grad_norm at least this many times the median of the window before it.
    grad_norm_blowup_factor: float = 10.0
    #: dpo/margin's last window fell by at least this share of its best window's (a positive best).
    dpo_margin_collapse_drop_share: float = 0.5
    #: dpo/chosen_reward (beta * (log p - log p_ref) of the chosen) fell by at least this since the first window,
    #: with the rejected's falling too and both below 0.
    dpo_logps_falling_chosen_fall: float = 0.1
    #: eval/loss rose at each of the last `evals` evaluations, by at least this fraction in all...
    overfitting_evals: int = 3
    #: ...while the training loss fell over the same steps.
    overfitting_eval_rise: float = 0.02

    @classmethod
    def for_run(cls, run: RunSpec) -> "AdvisorySettings":
        """The run's settings: `trainer.advisories` (absent: the defaults), K for staleness from
        `algorithm.async.maxStaleness` unless `staleness.max` says otherwise. A detector's section flattens to
        `<section>_<field>` (`klBlowup.max` -> `kl_blowup_max`)."""
        section = run.trainer.advisories
        values: dict[str, Any] = {}
        for f in fields(section) if section is not None else ():
            value = getattr(section, f.name)
            if is_dataclass(value):
                values.update({f"{f.name}_{g.name}": getattr(value, g.name) for g in fields(value)})
            else:
                values[f.name] = value
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:  # the contract and these fields drifted apart: a bug, not a user error (zod refused bad names)
            raise ValueError(f"trainer.advisories: no advisory setting for {', '.join(unknown)}")
        if values.get("staleness_max") is None:
            values["staleness_max"] = run.algorithm.async_.max_staleness if run.algorithm.async_ is not None else None
        return cls(**values)

