"""Health advisories (troupe/advisories): each detector fires on a synthetic stream that shows its
condition, stays quiet on a healthy one, and cites the numbers, steps and transcripts behind it."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from runtime_helpers import small_spec
from advisory_streams import LETTERS, echo_episodes, episode, healthy_metrics, play, random_text

from troupe import EventWriter
from troupe.advisories import DETECTORS, Advisor, AdvisorySettings
from troupe.spec import events_schema
from troupe.spec.runspec_types import RunSpec

KINDS = [
    "collapse", "zero_variance_groups", "entropy_collapse", "length_explosion", "truncation",
    "kl_blowup", "reward_hacking", "non_finite", "staleness", "actor_stalled",
    "loss_not_falling", "grad_norm_blowup", "dpo_margin_collapse", "dpo_logps_falling", "overfitting",
]


def only(advisories: list[dict], kind: str) -> list[dict]:
    return [a for a in advisories if a["kind"] == kind]


def test_every_kind_of_the_contract_has_one_detector_and_no_more():
    schema = events_schema()
    branch = next(b for b in schema["oneOf"] if b["properties"]["type"].get("const") == "advisory")
    assert sorted(branch["properties"]["kind"]["enum"]) == sorted(DETECTORS) == sorted(KINDS)


def test_a_healthy_run_gets_no_advisory(events_validator):
    rng = random.Random(0)
    advisories = play(60, healthy_metrics, echo_episodes(rng, lambda s: min(0.9, s / 60)))
    assert advisories == []


def test_unknown_detector_names_are_refused():
    with pytest.raises(ValueError, match="unknown advisory detector.*nope"):
        Advisor(detectors=["collapse", "nope"])


# ------------------------------------------------------------------ collapse


def bbbb_episodes(rng: random.Random, from_step: int = 81):
    """The multi-agent demo as issue #31 recorded it: random text at first, then from step 81 `say k:` answered
    with (mostly) b's whatever k is; the student speaks twice per conversation, the frozen partner between."""

    def make(step: int) -> list[dict]:
        row = rng.randrange(256)
        k = LETTERS[row % 26]
        out = []
        for s in range(8):
            if step < from_step:
                texts = [random_text(rng), random_text(rng)]
            else:
                texts = ["b" * 8 if rng.random() < 0.8 else "b" * 6 + random_text(rng, 2) for _ in range(2)]
            out.append(episode(step, 0, s, texts, sum(t.count(k) for t in texts) / 16, row, prompt=f"say {k}:"))
        return out

    return make


def test_collapse_fires_on_the_demos_bbbbbbbb_answers_and_cites_them(events_validator):
    advisories = play(120, healthy_metrics, bbbb_episodes(random.Random(7)))
    collapse = only(advisories, "collapse")
    assert len(collapse) == 1, collapse  # once when it starts, not once per step
    a = collapse[0]
    assert not list(events_validator.iter_errors(a))
    assert a["actor"] == "student" and a["severity"] == "warning"
    assert 81 + 2 <= a["step"] <= 81 + 6  # once collapsed steps are most of a window
    ev = a["evidence"]
    assert ev["toStep"] == a["step"] and ev["fromStep"] == a["step"] - 4
    assert ev["values"]["dominant_char_share"] >= 0.6
    assert ev["values"]["group_answer_entropy"] <= 0.5 * ev["values"]["baseline_group_answer_entropy"]
    assert "'b'" in ev["summary"]
    assert all(ev["fromStep"] <= ref["step"] <= ev["toStep"] and ref["environment"] == "relay" for ref in ev["episodes"])
    assert len(ev["episodes"]) == 5  # the window's groups
    assert ev["examples"][0].startswith("bbbbbbbb")
    assert "learningRate" in a["hint"]


def test_collapse_does_not_fire_when_the_answer_follows_the_prompt():
    # Learned: `say k:` answered kkkkkkkk for each k. Low per-group entropy, but not the same across prompts.
    advisories = play(80, healthy_metrics, echo_episodes(random.Random(3), lambda s: 0.2 if s < 20 else 1.0))
    assert only(advisories, "collapse") == []


def test_collapse_does_not_fire_before_there_is_a_window():
    advisories = play(4, healthy_metrics, bbbb_episodes(random.Random(1), from_step=1))
    assert only(advisories, "collapse") == []


# ------------------------------------------------------------------ zero-variance groups


def test_zero_variance_groups_fire_when_most_groups_score_alike_and_cite_those_groups():
    rng = random.Random(2)

    def make(step: int) -> list[dict]:
        out = []
        for g in range(4):
            flat = step > 10 and g != 3  # 3 of 4 groups all score 0 after step 10
            for s in range(4):
                out.append(episode(step, g, s, random_text(rng), 0.0 if flat else rng.random(), g))
        return out

    advisories = only(play(30, healthy_metrics, make), "zero_variance_groups")
    assert len(advisories) == 1 and advisories[0]["severity"] == "warning"
    ev = advisories[0]["evidence"]
    assert ev["values"]["zero_variance_share"] >= 0.5
    assert all(ref["group"] != 3 for ref in ev["episodes"])  # only the flat groups are cited
    assert {ref["step"] for ref in ev["episodes"]} <= set(range(ev["fromStep"], ev["toStep"] + 1))


def test_zero_variance_groups_that_all_score_the_best_reward_are_info_the_task_is_learned():
    rng = random.Random(4)
    make = lambda step: [episode(step, g, s, "kkkk", 1.0 if step > 5 or s else 0.5, g) for g in range(4) for s in range(4)]
    advisories = only(play(20, healthy_metrics, make), "zero_variance_groups")
    assert [a["severity"] for a in advisories] == ["info"]
    assert "looks learned" in advisories[0]["evidence"]["summary"]


def test_zero_variance_groups_quiet_when_rewards_differ_within_groups():
    rng = random.Random(2)
    make = lambda step: [episode(step, g, s, random_text(rng), rng.random(), g) for g in range(4) for s in range(4)]
    assert only(play(30, healthy_metrics, make), "zero_variance_groups") == []


# ------------------------------------------------------------------ metric detectors


def with_metric(name: str, value):
    return lambda step: {**healthy_metrics(step), name: value(step)}


def test_entropy_collapse_fires_and_cites_baseline_and_current():
    advisories = only(play(40, with_metric("entropy", lambda s: 2.0 if s <= 20 else 0.01)), "entropy_collapse")
    assert len(advisories) == 1
    ev = advisories[0]["evidence"]
    assert ev["values"]["baseline_entropy"] == pytest.approx(2.0)
    assert ev["values"]["entropy"] < 0.4
    assert advisories[0]["step"] <= 25


def test_entropy_collapse_while_the_reward_climbs_is_info_convergence_and_a_warning_when_it_stalls():
    entropy = lambda s: 2.0 if s <= 20 else 0.01  # noqa: E731
    climbing = lambda s: {**healthy_metrics(s), "entropy": entropy(s), "reward/mean": s / 40}  # noqa: E731
    stalled = lambda s: {**healthy_metrics(s), "entropy": entropy(s), "reward/mean": 0.5 if s <= 10 else 0.2}  # noqa: E731
    up = only(play(40, climbing), "entropy_collapse")
    assert [a["severity"] for a in up] == ["info"] and "likely convergence" in up[0]["evidence"]["summary"]
    assert [a["severity"] for a in only(play(40, stalled), "entropy_collapse")] == ["warning"]


def test_entropy_collapse_quiet_on_a_slow_healthy_decline():
    assert only(play(60, with_metric("entropy", lambda s: 2.0 - 0.01 * s)), "entropy_collapse") == []


def test_length_explosion_fires_when_completions_grow_several_fold_and_cites_the_longest():
    rng = random.Random(5)
    make = lambda step: [episode(step, 0, s, "x" * (8 if step < 20 else 8 * (s + 1) * 4), 0.5 + 0.01 * s, 0) for s in range(4)]
    advisories = only(play(40, with_metric("completion_len", lambda s: 8.0 if s < 20 else 40.0), make), "length_explosion")
    assert len(advisories) == 1
    ev = advisories[0]["evidence"]
    assert ev["values"]["growth"] >= 3
    assert ev["episodes"][0]["sample"] == 3  # the longest first


def test_length_explosion_quiet_when_length_holds():
    assert only(play(40, with_metric("completion_len", lambda s: 8.0 + (s % 3))), "length_explosion") == []


def test_truncation_fires_on_a_majority_of_cut_off_completions():
    advisories = only(play(20, with_metric("truncation_rate", lambda s: 0.2 if s < 10 else 0.9)), "truncation")
    assert len(advisories) == 1 and advisories[0]["evidence"]["values"]["truncation_rate"] >= 0.5
    assert only(play(20, with_metric("truncation_rate", lambda s: 0.3)), "truncation") == []
    # Truncated from the start (fixed-length answers by design): not news.
    assert only(play(20, with_metric("truncation_rate", lambda s: 0.95)), "truncation") == []


def test_kl_blowup_warns_then_is_critical_above_five_times_the_limit():
    advisories = only(play(30, with_metric("kl", lambda s: 0.02 if s < 15 else 8.0)), "kl_blowup")
    assert len(advisories) == 1
    assert advisories[0]["severity"] == "critical"
    assert advisories[0]["evidence"]["values"]["kl_before"] < 0.1
    mild = only(play(30, with_metric("kl", lambda s: 0.02 if s < 15 else 1.5)), "kl_blowup")
    assert [a["severity"] for a in mild] == ["warning"]
    assert only(play(30, with_metric("kl", lambda s: 0.3)), "kl_blowup") == []


def test_reward_hacking_fires_when_train_reward_rises_while_eval_falls():
    def metrics(step):
        values = {**healthy_metrics(step), "reward/mean": 0.2 + 0.01 * step}
        if step % 10 == 0:
            values["eval/reward/mean"] = 0.6 if step <= 20 else 0.6 - 0.05 * (step - 20) / 10
        return values

    advisories = only(play(60, metrics), "reward_hacking")
    assert len(advisories) == 1
    a = advisories[0]
    assert a["step"] % 10 == 0
    ev = a["evidence"]["values"]
    assert ev["eval_reward_after"] < ev["eval_reward_before"] and ev["train_reward_after"] > ev["train_reward_before"]


def test_reward_hacking_quiet_when_eval_rises_with_train():
    def metrics(step):
        values = {**healthy_metrics(step), "reward/mean": 0.2 + 0.01 * step}
        if step % 10 == 0:
            values["eval/reward/mean"] = 0.3 + 0.004 * step
        return values

    assert only(play(60, metrics), "reward_hacking") == []


def test_non_finite_metrics_are_critical_and_name_the_metric(events_validator):
    advisories = only(play(10, with_metric("loss", lambda s: math.nan if s >= 6 else 0.3)), "non_finite")
    assert len(advisories) == 1  # once while it lasts
    a = advisories[0]
    assert a["step"] == 6 and a["severity"] == "critical" and "loss" in a["evidence"]["summary"]
    assert not list(events_validator.iter_errors(a))
    assert only(play(10, healthy_metrics), "non_finite") == []


def test_staleness_beyond_k():
    settings = AdvisorySettings(staleness_max=2)
    stale = only(play(10, with_metric("staleness/max", lambda s: 1.0 if s < 5 else 3.0), settings=settings), "staleness")
    assert len(stale) == 1 and stale[0]["step"] == 5 and stale[0]["evidence"]["values"]["k"] == 2
    assert only(play(10, with_metric("staleness/max", lambda s: 2.0), settings=settings), "staleness") == []


def test_staleness_k_comes_from_the_specs_async_settings():
    spec = small_spec()
    spec["algorithm"]["async"] = {"maxStaleness": 3}
    assert Advisor.for_run(RunSpec.from_dict(spec)).settings.staleness_max == 3
    assert "async" not in small_spec()["algorithm"]
    assert Advisor.for_run(RunSpec.from_dict(small_spec())).settings.staleness_max is None


def test_an_actor_that_stopped_changing():
    advisories = only(play(20, with_metric("grad_norm", lambda s: 0.4 if s < 8 else 0.0)), "actor_stalled")
    assert len(advisories) == 1 and advisories[0]["step"] == 12
    assert only(play(20, with_metric("grad_norm", lambda s: 0.0 if s % 2 else 0.3)), "actor_stalled") == []


def test_an_advisory_clears_and_fires_again_when_the_condition_returns():
    # Clear for a whole window (5 steps) in between: reported twice; a flicker within a window: once.
    nan_twice = with_metric("loss", lambda s: math.nan if s in (3, 9) else 0.3)
    assert [a["step"] for a in only(play(12, nan_twice), "non_finite")] == [3, 9]
    flicker = with_metric("loss", lambda s: math.nan if s in (3, 6) else 0.3)
    assert [a["step"] for a in only(play(12, flicker), "non_finite")] == [3]


def test_advisories_are_per_actor():
    events = EventWriter(keep=True)
    advisor = Advisor()
    events.watch(advisor)
    for step in range(1, 11):
        events.metric(step, {**healthy_metrics(step), "grad_norm": 0.0}, actor="bob")
        events.metric(step, healthy_metrics(step), actor="alice")
        advisor.report(events, step)
    stalled = [e for e in events.events if e["type"] == "advisory"]
    assert [(a["actor"], a["kind"]) for a in stalled] == [("bob", "actor_stalled")]


def test_a_real_run_reports_advisories_through_the_loop(events_validator, tmp_path: Path):
    """The hook in the training loop: a demo run whose learning rate is 0 gets `actor_stalled`? No: grad_norm
    is not 0 with lr 0. A run with groupSize 1 has zero-variance groups by construction (one sample)."""
    from runtime_helpers import check_protocol, small_spec

    from troupe import run_spec

    spec = small_spec(steps=6)
    # The reward is a constant 0 when no letter is asked: every group flat. A reward weight of 0 does it.
    spec["environments"][0]["rewards"][0]["weight"] = 0
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    check_protocol(result.events, events_validator)
    advisories = [e for e in result.events if e["type"] == "advisory"]
    kinds = {a["kind"] for a in advisories}
    assert "zero_variance_groups" in kinds, advisories
    assert all(a["actor"] == "student" for a in advisories)
    # Emitted at the end of its step: after the step's episodes.
    first = next(a for a in advisories if a["kind"] == "zero_variance_groups")
    before = result.events[: result.events.index(first)]
    assert any(e["type"] == "episode" and e["step"] == first["step"] for e in before)


# ------------------------------------------------------------------ the recorded demo


def test_collapse_fires_on_the_recorded_multi_agent_demo_run(events_validator):
    """The seeded multi-agent demo as it ran (fixed seed 1234, recorded in fixtures/): `say k:` answered with
    b's. The collapse advisory fires, cites b and the recorded transcripts of its window."""
    recorded = json.loads((Path(__file__).parent / "fixtures" / "multi_agent_demo_collapse.json").read_text())
    metrics = dict((step, values) for step, values in recorded["metrics"])
    episodes: dict[int, list[dict]] = {}
    for step, group, sample, row, reward, prompt, said in recorded["episodes"]:
        episodes.setdefault(step, []).append(episode(step, group, sample, said, reward, row, prompt=prompt))
    advisories = play(max(metrics), lambda s: metrics[s], lambda s: episodes.get(s, []))
    for a in advisories:
        assert not list(events_validator.iter_errors(a))
    collapse = only(advisories, "collapse")
    assert collapse, [a["kind"] for a in advisories]
    first = collapse[0]
    assert first["step"] <= 81  # before the steps 81-120 the issue read collapsed answers in
    assert "'b'" in first["evidence"]["summary"]
    assert first["evidence"]["values"]["prompts_with_that_char"] >= 0.6
    cited = {(r["step"], r["group"]) for r in first["evidence"]["episodes"]}
    assert cited and cited <= {(s, g) for s, eps in episodes.items() for g in {e["group"] for e in eps}}


def test_each_actor_is_judged_on_its_own_turn_rewards_in_a_conversation():
    """Two trained actors: the episode's reward is their mean, but each turn carries its speaker's own. Bob's
    own rewards are flat (zero-variance groups); Alice's differ; the mean would hide both."""
    rng = random.Random(9)

    def make(step: int) -> list[dict]:
        out = []
        for g in range(2):
            for s in range(4):
                a = rng.random()
                e = episode(step, g, s, random_text(rng), (a + 0.0) / 2, g, actor="alice")
                e["messages"][-1]["reward"] = a
                e["messages"].append({"actor": "bob", "role": "assistant", "content": random_text(rng), "trained": True, "turn": 1, "reward": 0.0})
                out.append(e)
        return out

    advisories = only(play(10, None, make), "zero_variance_groups")
    assert [a["actor"] for a in advisories] == ["bob"]


def test_a_failing_detector_is_switched_off_with_a_warning_and_training_goes_on():
    from troupe.advisories.registry import DETECTORS, register

    @register("broken_for_test")
    class Broken:
        def check(self, history, settings):
            raise ZeroDivisionError("boom")

    try:
        events = EventWriter(keep=True)
        advisor = Advisor(detectors=["broken_for_test", "non_finite"])
        events.watch(advisor)
        for step in (1, 2, 3):
            events.metric(step, {"loss": math.nan if step == 3 else 0.1}, actor="a")
            advisor.report(events, step)
        warnings = [e["message"] for e in events.events if e["type"] == "log" and "broken_for_test" in e["message"]]
        assert warnings == ["health advisory 'broken_for_test' failed at step 1 and is off for the rest of the run: ZeroDivisionError: boom"]
        assert [e["kind"] for e in events.events if e["type"] == "advisory"] == ["non_finite"]  # the others still run
    finally:
        DETECTORS.pop("broken_for_test")
