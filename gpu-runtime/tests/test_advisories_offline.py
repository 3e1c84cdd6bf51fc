"""Health advisories for the offline learners (sft, dpo) on synthetic metric streams shaped as the offline
loop reports them (`loss`, `grad_norm`, `lr`, `dpo/*` per step; `eval/loss` per evaluation): each fires on
its condition with the numbers behind it, and stays quiet on a healthy run."""

from __future__ import annotations

import math
from typing import Callable

from advisory_streams import play
from runtime_helpers import small_spec

from troupe.advisories import Advisor
from troupe.spec.runspec_types import RunSpec

OFFLINE_KINDS = {"loss_not_falling", "grad_norm_blowup", "dpo_margin_collapse", "dpo_logps_falling", "overfitting"}


def advisor_of(algorithm: str) -> Advisor:
    spec = small_spec()
    spec["algorithm"]["name"] = algorithm
    return Advisor.for_run(RunSpec.from_dict(spec))


def sft_advisor() -> Advisor:
    return advisor_of("sft")


def dpo_advisor() -> Advisor:
    return advisor_of("dpo")


def healthy_sft(step: int) -> dict[str, float]:
    """Loss halving every 20 steps, steady gradient norm, a held-out loss falling every 5 steps."""
    out = {"loss": 2.0 * 0.5 ** (step / 20), "grad_norm": 1.0 + 0.1 * math.sin(step), "lr": 1e-4, "sft/token_accuracy": min(1.0, step / 40), "completion_len": 6.0}
    if step % 5 == 0:
        out["eval/loss"] = 2.1 * 0.5 ** (step / 25)
    return out


def healthy_dpo(step: int) -> dict[str, float]:
    """Margin growing, chosen reward up and rejected down (the textbook DPO run); the sigmoid loss of that margin."""
    return {
        "loss": math.log1p(math.exp(-0.05 * step)), "grad_norm": 2.0, "lr": 1e-5, "dpo/margin": 0.05 * step, "dpo/accuracy": min(1.0, 0.5 + step / 60),
        "dpo/chosen_reward": 0.01 * step, "dpo/rejected_reward": -0.04 * step,
    }


def kinds(advisories: list[dict]) -> list[str]:
    return [a["kind"] for a in advisories]


def only(advisories: list[dict], kind: str) -> list[dict]:
    return [a for a in advisories if a["kind"] == kind]


def with_(base: Callable[[int], dict[str, float]], **changes: Callable[[int], float]) -> Callable[[int], dict[str, float]]:
    return lambda s: {**base(s), **{k.replace("__", "/"): f(s) for k, f in changes.items()}}


def test_an_offline_run_gets_the_offline_detectors_and_not_the_rollout_ones():
    sft = {d.kind for d in sft_advisor().detectors}
    grpo = {d.kind for d in advisor_of("grpo").detectors}
    assert OFFLINE_KINDS <= sft and "non_finite" in sft and "actor_stalled" in sft
    assert not sft & {"collapse", "zero_variance_groups", "entropy_collapse", "kl_blowup", "length_explosion"}
    assert not grpo & OFFLINE_KINDS


def test_healthy_sft_and_dpo_runs_get_no_advisory():
    assert play(60, healthy_sft, advisor=sft_advisor()) == []
    assert play(60, healthy_dpo, advisor=dpo_advisor()) == []


def test_a_nan_loss_is_a_critical_non_finite_advisory_in_an_offline_run():
    a = play(12, with_(healthy_sft, loss=lambda s: math.nan if s == 9 else 1.0 - 0.05 * s), advisor=sft_advisor())
    assert kinds(a) == ["non_finite"] and a[0]["step"] == 9 and a[0]["severity"] == "critical" and "loss" in a[0]["evidence"]["summary"]


def test_loss_not_falling_fires_on_a_flat_loss_and_cites_both_windows():
    a = only(play(20, with_(healthy_sft, loss=lambda s: 1.5 + 0.01 * (s % 2)), advisor=sft_advisor()), "loss_not_falling")
    assert len(a) == 1 and a[0]["step"] == 10  # the first step with a first and a last window
    ev = a[0]["evidence"]
    assert (ev["fromStep"], ev["toStep"]) == (6, 10)
    assert ev["values"]["baseline_loss"] == 1.506 and ev["values"]["loss"] == 1.504  # odd steps 1.51: three of 1-5, two of 6-10
    assert "less than the 5% drop" in ev["summary"]


def test_loss_not_falling_fires_when_the_loss_climbs_back():
    loss = lambda s: 2.0 - 0.1 * s if s <= 10 else 1.0 + 0.15 * (s - 10)  # noqa: E731
    a = only(play(30, with_(healthy_sft, loss=loss), advisor=sft_advisor()), "loss_not_falling")
    assert len(a) == 1 and a[0]["step"] == 17  # steps 13-17 average 1.75, over 95% of steps 1-5's 1.7 (12-16: 1.6, under)
    assert "rose" in a[0]["evidence"]["summary"]


def test_loss_not_falling_quiet_when_it_falls_just_enough():
    # Falls 6% from the first window to every later one: above the default 5%.
    assert only(play(30, with_(healthy_sft, loss=lambda s: 1.0 if s <= 5 else 0.94), advisor=sft_advisor()), "loss_not_falling") == []


def test_grad_norm_blowup_fires_on_a_spike_with_its_factor():
    a = only(play(20, with_(healthy_sft, grad_norm=lambda s: 25.0 if s == 12 else 1.0), advisor=sft_advisor()), "grad_norm_blowup")
    assert len(a) == 1 and a[0]["step"] == 12
    assert a[0]["evidence"]["values"] == {"grad_norm": 25.0, "median_grad_norm_before": 1.0, "factor": 25.0}
    assert "steps 7-11" in a[0]["evidence"]["summary"]


def test_grad_norm_blowup_quiet_below_the_factor_and_when_it_grows_slowly():
    assert only(play(20, with_(healthy_sft, grad_norm=lambda s: 9.0 if s == 12 else 1.0), advisor=sft_advisor()), "grad_norm_blowup") == []
    assert only(play(40, with_(healthy_sft, grad_norm=lambda s: 1.2**s), advisor=sft_advisor()), "grad_norm_blowup") == []


def test_dpo_margin_collapse_fires_when_the_margin_falls_from_its_best_window():
    margin = lambda s: 0.1 * s if s <= 15 else max(0.0, 1.5 - 0.3 * (s - 15))  # noqa: E731
    a = only(play(30, with_(healthy_dpo, dpo__margin=margin), advisor=dpo_advisor()), "dpo_margin_collapse")
    assert len(a) == 1
    ev = a[0]["evidence"]
    # The best window is steps 12-16 (1.2, 1.3, 1.4, 1.5, 1.2: 1.32); steps 16-20 average 0.6, under half of it
    # (steps 15-19: 0.9, not yet).
    assert a[0]["step"] == 20 and ev["values"]["best_margin"] == 1.32 and "to step 16" in ev["summary"]
    assert ev["values"]["margin"] == 0.6 and ev["values"]["drop_share"] == 0.545455
    assert "accuracy" in ev["values"]


def test_dpo_margin_collapse_quiet_while_the_margin_grows_or_dips_a_little():
    assert only(play(40, with_(healthy_dpo, dpo__margin=lambda s: 1.0 + 0.1 * math.sin(s)), advisor=dpo_advisor()), "dpo_margin_collapse") == []


def test_dpo_logps_falling_fires_when_chosen_and_rejected_both_fall():
    a = only(
        play(20, with_(healthy_dpo, dpo__chosen_reward=lambda s: -0.03 * s, dpo__rejected_reward=lambda s: -0.08 * s), advisor=dpo_advisor()),
        "dpo_logps_falling",
    )
    assert len(a) == 1 and a[0]["step"] == 10
    v = a[0]["evidence"]["values"]
    assert v["chosen_reward"] == -0.24 and v["baseline_chosen_reward"] == -0.09 and v["rejected_reward"] == -0.64


def test_dpo_logps_falling_quiet_when_the_chosen_rises():
    assert only(play(40, healthy_dpo, advisor=dpo_advisor()), "dpo_logps_falling") == []


def test_overfitting_fires_when_eval_loss_rises_while_train_loss_falls():
    def metrics(s: int) -> dict[str, float]:
        out = {"loss": 2.0 - 0.04 * s, "grad_norm": 1.0, "lr": 1e-4}
        if s % 5 == 0:
            out["eval/loss"] = 1.8 - 0.1 * s / 5 if s <= 15 else 1.5 + 0.1 * (s - 15) / 5
        return out

    a = only(play(40, metrics, advisor=sft_advisor()), "overfitting")
    assert len(a) == 1 and a[0]["step"] == 25  # evals at 15, 20, 25: 1.5, 1.6, 1.7
    v = a[0]["evidence"]["values"]
    assert v["eval_loss_before"] == 1.5 and v["eval_loss_after"] == 1.7 and v["train_loss_after"] < v["train_loss_before"]


def test_overfitting_quiet_when_train_loss_rises_too():
    def metrics(s: int) -> dict[str, float]:
        out = {"loss": 1.0 + 0.01 * s, "grad_norm": 1.0}
        if s % 5 == 0:
            out["eval/loss"] = 1.0 + 0.1 * s
        return out

    assert only(play(40, metrics, advisor=sft_advisor()), "overfitting") == []
