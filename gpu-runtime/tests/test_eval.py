"""Evaluation during training: held-out rows, the actor's own eval sampling, training untouched."""

import pytest
import copy

from runtime_helpers import check_protocol, small_spec

from troupe import EventWriter, run_spec


def _spec(eval_every):
    spec = small_spec(steps=3, evalEvery=eval_every)
    spec["datasets"][0]["source"]["size"] = 32
    spec["datasets"][0]["evalFraction"] = 0.25
    spec["actors"][0]["evalSampling"] = {"temperature": 0, "maxNewTokens": 3}
    return spec


def test_eval_uses_its_own_sampling_and_never_changes_training(tmp_path, events_validator):
    with_eval = run_spec(_spec(2), events=EventWriter(keep=True), work_dir=tmp_path)
    assert with_eval.state == "succeeded", with_eval.message
    check_protocol(with_eval.events, events_validator)
    evals = [e for e in with_eval.events if e["type"] == "metric" and "eval/reward/mean" in e["values"]]
    assert [e["step"] for e in evals] == [2, 3]  # every 2 steps, and the last
    for e in evals:
        assert e["actor"] == "student" and e["values"]["eval/samples"] == 8  # 25% of 32 rows
        assert e["values"]["eval/completion_len"] <= 3  # evalSampling.maxNewTokens, not sampling's 8
    without = run_spec(_spec(0), events=EventWriter(keep=True), work_dir=tmp_path)
    assert with_eval.metrics("reward/mean") == without.metrics("reward/mean")
    assert with_eval.metrics("loss") == without.metrics("loss")


def test_eval_without_held_out_rows_is_refused(tmp_path):
    spec = copy.deepcopy(_spec(2))
    spec["datasets"][0]["evalFraction"] = 0
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.exit_code == 2
    assert next(e for e in result.events if e["type"] == "error")["field"] == "trainer.evalEvery"


def test_each_environment_class_is_evaluated_by_the_evaluation_registered_for_it_or_its_nearest_base():
    from troupe.envs.acting import ActingEnvironment
    from troupe.envs.collaborative import CollaborativeEnvironment
    from troupe.envs.environments import SingleTurnEnvironment
    from troupe.evaluation import EVALUATIONS, evaluation_of

    single = object.__new__(SingleTurnEnvironment)
    acting = object.__new__(ActingEnvironment)  # a subclass of CollaborativeEnvironment: its base's evaluation
    assert evaluation_of(single) is EVALUATIONS[SingleTurnEnvironment]
    assert evaluation_of(acting) is EVALUATIONS[CollaborativeEnvironment]
    assert EVALUATIONS[SingleTurnEnvironment] is not EVALUATIONS[CollaborativeEnvironment]

    class Unregistered:
        name = "mystery"

    with pytest.raises(TypeError, match="mystery"):
        evaluation_of(Unregistered())
