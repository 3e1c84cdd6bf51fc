"""Detectors over what an actor answered: collapse (the same answer whatever the prompt) and GRPO groups
whose samples all scored the same (their advantages are 0: the update learns nothing from them)."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Iterable, Sequence

from ..registry import register
from ..types import AdvisorySettings, EpisodeView, Finding, StepRecord
from ..window import char_entropy, dominant_char, last, mean, steps_label


def _episodes(records: Sequence[StepRecord]) -> list[EpisodeView]:
    return [e for r in records for e in r.episodes]


def _groups(episodes: Sequence[EpisodeView]) -> dict[tuple[int, str, int], list[EpisodeView]]:
    groups: dict[tuple[int, str, int], list[EpisodeView]] = defaultdict(list)
    for e in episodes:
        groups[(e.step, e.environment, e.group)].append(e)
    return groups


def group_answer_entropy(episodes: Sequence[EpisodeView]) -> float:
    """Mean over GRPO groups of the character entropy (bits per character) of the group's answers: how varied
    one prompt's answers are. Characters rather than whole answers, so near-copies (`bbbbbbbb`, `bbbbbbab`)
    count as the near-copies they are."""
    return mean(char_entropy([c for e in g for c in e.completions]) for g in _groups(episodes).values())


@register("collapse")
class Collapse:
    """The actor gives (nearly) the same answer to different prompts, and its per-prompt answer entropy has
    fallen: e.g. `say a:` answered `bbbbbbbb` like every other letter."""

    def check(self, history: Sequence[StepRecord], settings: AdvisorySettings) -> Finding | None:
        with_episodes = [r for r in history if r.episodes]
        if len(with_episodes) < settings.window:
            return None
        recent = with_episodes[-settings.window :]
        episodes = _episodes(recent)
        by_prompt: dict[tuple, list[str]] = defaultdict(list)
        for e in episodes:
            by_prompt[e.prompt_key].extend(c for c in e.completions if c.strip())
        completions = [c for cs in by_prompt.values() for c in cs]
        if len(by_prompt) < 3 or len(completions) < 4:
            return None
        char, same_share = same_dominant_char(by_prompt.values(), settings.collapse_dominant_char_share)
        shared = cross_prompt_share(episodes)
        if same_share < settings.collapse_prompt_share and shared < settings.collapse_cross_prompt_share:
            return None
        if not char:
            char = dominant_char(completions)[0]
        char_share = dominant_char(completions)[1]
        prompts = by_prompt
        entropy = group_answer_entropy(episodes)
        values = {
            "dominant_char_share": char_share, "prompts_with_that_char": same_share, "cross_prompt_share": shared, "distinct_share": len({e.text for e in episodes}) / len(episodes),
            "group_answer_entropy": entropy, "prompts": float(len(prompts)),
        }
        baseline_note = ""
        if len(with_episodes) >= 2 * settings.window:
            base_records = with_episodes[: settings.window]
            baseline = group_answer_entropy(_episodes(base_records))
            values["baseline_group_answer_entropy"] = baseline
            if entropy > settings.collapse_entropy_ratio * baseline:
                return None
            baseline_note = f" (was {baseline:.2f} over {steps_label(base_records[0].step, base_records[-1].step)})"
        first, last_step = recent[0].step, recent[-1].step
        mostly = sum(1 for c in completions if c.count(char) >= 0.5 * len(c.strip()))
        top = [text for text, _ in Counter(e.text for e in episodes).most_common(3)]
        return Finding(
            severity="warning",
            summary=(
                f"Over {steps_label(first, last_step)}, {len(prompts)} different prompts got nearly the same answer ({same_share:.0%} of them mostly {char!r}): "
                f"{mostly} of {len(completions)} answers are mostly {char!r} ({char_share:.0%} of all their characters), "
                f"{shared:.0%} of {len(episodes)} transcripts gave an answer also given to another prompt; "
                f"per-prompt answer entropy {entropy:.2f} bits/char{baseline_note}."
            ),
            from_step=first,
            to_step=last_step,
            values=values,
            episodes=tuple(e.ref() for e in _first_of_each_group(episodes)),
            examples=tuple(top),
            hint=(
                "The policy answers without reading the prompt (mode collapse). Try a lower learningRate, a KL penalty "
                "(training.klBeta > 0) or a higher sampling temperature, a larger groupSize, and a reward that scores "
                "the answer against the prompt rather than its shape; if every prompt truly has the same answer, ignore this."
            ),
        )


def same_dominant_char(answers_per_prompt: Iterable[Sequence[str]], share: float) -> tuple[str, float]:
    """The character that dominates (at least `share` of the characters of) the answers of the most prompts,
    and the share of prompts it dominates: 1 when every prompt is answered with mostly the same character."""
    per_prompt = [dominant_char(answers) for answers in answers_per_prompt]
    counts = Counter(ch for ch, s in per_prompt if ch and s >= share)
    if not counts or not per_prompt:
        return "", 0.0
    ch, n = counts.most_common(1)[0]
    return ch, n / len(per_prompt)


def cross_prompt_share(episodes: Sequence[EpisodeView]) -> float:
    """Share of transcripts whose exact answer was also given to a different prompt (0 when answers follow the prompt)."""
    prompts_of: dict[str, set] = defaultdict(set)
    for e in episodes:
        prompts_of[e.text].add(e.prompt_key)
    return sum(1 for e in episodes if len(prompts_of[e.text]) > 1) / len(episodes) if episodes else 0.0


def _first_of_each_group(episodes: Sequence[EpisodeView]) -> list[EpisodeView]:
    return [g[0] for g in _groups(episodes).values()]


@register("zero_variance_groups")
class ZeroVarianceGroups:
    """A large share of GRPO groups whose samples all got the same reward: advantages 0, nothing learned."""

    def check(self, history: Sequence[StepRecord], settings: AdvisorySettings) -> Finding | None:
        if len(history) < settings.window:
            return None
        recent = [r for r in last(history, settings.window) if r.episodes]
        if not recent:
            return None
        groups = {k: g for k, g in _groups(_episodes(recent)).items() if len(g) >= 2}
        if len(groups) < 2:
            return None
        flat = {k: g for k, g in groups.items() if max(e.reward for e in g) - min(e.reward for e in g) <= 1e-9}
        share = len(flat) / len(groups)
        if share < settings.zero_variance_groups_share:
            return None
        flat_reward = mean(g[0].reward for g in flat.values())
        best = max(e.reward for g in groups.values() for e in g)
        # Groups that all score the best reward seen: the task is learned for them (info, not a warning).
        solved = all(abs(g[0].reward - best) <= 1e-9 for g in flat.values()) and best > 0
        first, last_step = recent[0].step, recent[-1].step
        return Finding(
            severity="info" if solved else "warning",
            summary=f"Over {steps_label(first, last_step)}, {len(flat)} of {len(groups)} recorded GRPO groups ({share:.0%}) had every sample score the same reward, so their advantages are 0 and the update learns nothing from them. "
            + (f"They all score the best reward seen ({best:.3g}): the task looks learned for them." if solved else f"Their reward: {flat_reward:.3g} on average."),
            from_step=first,
            to_step=last_step,
            values={"zero_variance_share": share, "groups": float(len(groups)), "mean_reward_of_flat_groups": flat_reward, "best_reward": best},
            episodes=tuple(g[0].ref() for g in flat.values()),
            hint=(
                "Give the group room to differ: a larger algorithm.groupSize or sampling temperature, a graded reward "
                "(partial credit instead of 0/1), or algorithm.dynamicSampling to replace such groups with fresh prompts. "
                "If they all score the top reward, the task is learned: use harder prompts."
            ),
        )
