"""Eval-only environments (`environments[].evalOnly`) and eval-only runs (`trainer.steps: 0`): every
environment kind is evaluated, metrics per environment, and nothing evaluated is ever trained on."""

import copy
import socket

import pytest
import torch
from collab_helpers import secret_digit_spec
from hf_cache_helpers import put_in_datasets_cache
from runtime_helpers import check_protocol, small_spec

import troupe.train as train_module
from troupe import EventWriter, run_spec

EXAM = {"test": [{"prompt": f"say {c}:", "letter": c} for c in "abcdefgh"]}


@pytest.fixture
def hf_home(tmp_path, monkeypatch):
    home = tmp_path / "hf"
    monkeypatch.setenv("HF_HOME", str(home))
    for name in ("HF_DATASETS_CACHE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(socket.socket, "connect", lambda *a, **k: (_ for _ in ()).throw(OSError("no network in this test")))
    put_in_datasets_cache(home / "datasets", "troupe-test/exam", "main", EXAM)
    return home


@pytest.fixture
def weights(monkeypatch):
    """Every local actor's parameters as built (before any step), and the live actors, by name."""
    built: dict[str, dict[str, torch.Tensor]] = {}
    live: dict = {}
    real = train_module.build_actors

    def build_and_remember(*args, **kwargs):
        actors, api_actors = real(*args, **kwargs)
        for name, actor in actors.items():
            built[name] = {k: v.detach().clone() for k, v in actor.loaded.model.state_dict().items()}
            live[name] = actor
        return actors, api_actors

    monkeypatch.setattr(train_module, "build_actors", build_and_remember)

    def changed(name: str) -> bool:
        now = live[name].loaded.model.state_dict()
        return any(not torch.equal(now[k].cpu(), v.cpu()) for k, v in built[name].items())

    return changed


def _with_exam(spec):
    spec["datasets"].append({"name": "exam", "source": {"kind": "huggingface", "id": "troupe-test/exam", "config": "main", "split": "test"}})
    spec["environments"].append({**copy.deepcopy(spec["environments"][0]), "name": "exam", "dataset": "exam", "evalOnly": True})
    return spec


def test_an_eval_only_environment_is_evaluated_every_eval_and_never_trained_on(hf_home, tmp_path, events_validator, weights):
    spec = _with_exam(small_spec(steps=3, evalEvery=2))
    spec["actors"][0]["evalSampling"] = {"temperature": 0, "maxNewTokens": 3}
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path / "a")
    assert result.state == "succeeded", result.message
    check_protocol(result.events, events_validator)
    evals = [e for e in result.events if e["type"] == "metric" and "eval/exam/reward/mean" in e["values"]]
    assert [e["step"] for e in evals] == [2, 3]  # every evalEvery steps, and the last
    for e in evals:
        v = e["values"]
        assert e["actor"] == "student" and v["eval/exam/samples"] == 8  # every row of the eval-only dataset
        assert v["eval/exam/completion_len"] <= 3 and "eval/exam/reward/letter_match" in v and "eval/exam/reward/std" in v
        assert v["eval/reward/mean"] == v["eval/exam/reward/mean"]  # the only environment evaluated
    assert {e["environment"] for e in result.events if e["type"] == "episode"} == {"echo"}  # never sampled for training
    assert weights("student")  # the trained environment did train

    # The same run without the eval-only environment trains identically: it took no prompt and no RNG draw.
    plain = small_spec(steps=3)
    without = run_spec(plain, events=EventWriter(keep=True), work_dir=tmp_path / "b")
    assert result.metrics("loss") == without.metrics("loss")
    assert result.metrics("reward/mean") == without.metrics("reward/mean")


def _every_kind(folder):
    """student answers the exam (single_turn); Alice (trained) and Bob (frozen) play the digits task as
    collaborative, adversarial and parallel environments. All eval-only: an eval-only run."""
    spec = secret_digit_spec(folder, steps=0)
    spec["actors"].insert(0, copy.deepcopy(spec["actors"][0]) | {"name": "student"})
    spec["actors"][2]["trainable"] = False  # Bob: the frozen defender of the adversarial one
    spec["datasets"][0]["evalFraction"] = 0.0
    spec["datasets"].append({"name": "exam", "source": {"kind": "huggingface", "id": "troupe-test/exam", "config": "main", "split": "test"}})
    spec["rewards"].append({"name": "letter_match", "source": {"kind": "builtin", "name": "letter_match"}})
    secret = spec["environments"][0]
    spec["environments"] = [
        {"name": "exam", "kind": "single_turn", "dataset": "exam", "actors": ["student"], "prompt": {"applyChatTemplate": False}, "rewards": [{"reward": "letter_match"}], "evalOnly": True},
        {**secret, "evalOnly": True},
        {**secret, "name": "duel", "kind": "adversarial", "roundSpec": None, "evalOnly": True},
        {**secret, "name": "drafts", "kind": "parallel", "roundSpec": None, "evalOnly": True},
    ]
    for env in spec["environments"][2:]:
        del env["roundSpec"]
    return spec


def test_an_eval_only_run_evaluates_every_environment_kind_once_and_changes_no_weight(hf_home, tmp_path, events_validator, weights):
    result = run_spec(_every_kind(tmp_path), events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    assert result.steps_completed == 0 and "nothing was trained" in result.message
    check_protocol(result.events, events_validator)
    metrics = {e["actor"]: e for e in result.events if e["type"] == "metric"}
    assert set(metrics) == {"student", "Alice", "Bob"} and {e["step"] for e in metrics.values()} == {0}
    student, alice, bob = (metrics[a]["values"] for a in ("student", "Alice", "Bob"))
    assert student["eval/exam/samples"] == 8 and not any(k.startswith(("eval/secret/", "eval/duel/")) for k in student)
    for env in ("secret", "duel", "drafts"):
        for values in (alice, bob):  # one episode per row of the 64-row digits set, each actor scored
            assert values[f"eval/{env}/samples"] == 64
            assert 0 <= values[f"eval/{env}/reward/mean"] <= 1 and f"eval/{env}/reward/said" in values
    assert alice["eval/samples"] == 3 * 64  # the overall eval/... names cover every environment of the actor
    assert not [e for e in result.events if e["type"] == "episode"]  # no training step, no transcript
    assert not [e for e in result.events if e["type"] == "metric" and "loss" in e["values"]]
    assert not weights("student") and not weights("Alice") and not weights("Bob")


def test_eval_schedules_and_scores_repeat_exactly(hf_home, tmp_path):
    """Evaluations are comparable across a run: the same rows, schedules and greedy answers give the same numbers."""
    spec = _every_kind(tmp_path)
    for actor in spec["actors"]:
        actor["evalSampling"] = {"temperature": 0, "maxNewTokens": 2}
    first = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    again = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    values = lambda r: {e["actor"]: e["values"] for e in r.events if e["type"] == "metric"}  # noqa: E731
    assert values(first) == values(again)


def test_eval_only_refusals_name_the_field(hf_home, tmp_path):
    spec = _with_exam(small_spec(steps=3))  # evalEvery 0
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.exit_code == 2
    assert next(e for e in result.events if e["type"] == "error")["field"] == "environments.1.evalOnly"


def test_an_environment_that_acts_is_evaluated_too(tmp_path, events_validator, weights):
    """A `python` environment class (acting.py: it speaks between the actors' turns) in an eval-only run."""
    from test_acting import relay_spec

    spec = relay_spec(tmp_path, steps=0)
    spec["environments"][0]["evalOnly"] = True
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    check_protocol(result.events, events_validator)
    metrics = {e["actor"]: e["values"] for e in result.events if e["type"] == "metric"}
    assert set(metrics) == {"Alice", "Bob"}
    assert "eval/relay/reward/environment" in metrics["Alice"]  # the environment's own score() was evaluated too
    for values in metrics.values():
        assert values["eval/relay/samples"] == 8  # one episode per row of relay_spec's 8-row dataset
        assert "eval/relay/reward/mean" in values and "eval/relay/reward/short" in values
    assert not weights("Alice") and not weights("Bob")


def test_an_eval_only_run_of_a_frozen_model(tmp_path, events_validator):
    """Evaluating a model without training it at all: every actor frozen is fine when trainer.steps is 0."""
    spec = small_spec(steps=0)
    spec["actors"][0]["trainable"] = False
    spec["environments"][0]["evalOnly"] = True
    spec["datasets"][0]["source"]["size"] = 16
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    check_protocol(result.events, events_validator)
    [metric] = [e for e in result.events if e["type"] == "metric"]
    assert metric["step"] == 0 and metric["actor"] == "student" and metric["values"]["eval/echo/samples"] == 16
