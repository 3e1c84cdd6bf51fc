"""Every `algorithm.name` of the contracts' list has a learner registered behind the one interface
(algorithms/learner.py), and the training loop builds it through the registry rather than choosing by kind."""

from pathlib import Path

import pytest
import torch
from runtime_helpers import small_spec

from troupe.algorithms.learner import LEARNERS, LearnerSetup, _import_learners, build_learner
from troupe.algorithms.learners.happo import HappoLearner
from troupe.algorithms.learners.value_decomposition import QmixLearner, VdnLearner
from troupe.algorithms.names import ALGORITHM_NAMES, TEAM_ALGORITHMS
from troupe.algorithms.on_policy import OnPolicyLearner
from troupe.launch.distributed import RankContext


def test_every_algorithm_name_has_a_learner():
    _import_learners()
    assert set(ALGORITHM_NAMES) <= set(LEARNERS), set(ALGORITHM_NAMES) - set(LEARNERS)
    assert set(TEAM_ALGORITHMS) == {"vdn", "qmix", "happo"}
    assert LEARNERS["vdn"] is VdnLearner and LEARNERS["qmix"] is QmixLearner and LEARNERS["happo"] is HappoLearner
    assert LEARNERS["mappo"] is OnPolicyLearner and LEARNERS["grpo"] is OnPolicyLearner
    for team in (VdnLearner, QmixLearner, HappoLearner):
        assert issubclass(team, OnPolicyLearner) and team.rolls_out


def test_an_unregistered_name_is_refused_by_field():
    spec = small_spec()
    spec["algorithm"]["name"] = "not_a_learner"
    setup = LearnerSetup(spec, {}, [], None, RankContext(), Path("."), print, print, None, torch.device("cpu"))
    with pytest.raises(ValueError, match=r"algorithm.name: no learner is registered for 'not_a_learner'"):
        build_learner(setup)


def test_the_loop_does_not_choose_a_learner_by_kind():
    source = (Path(__file__).parents[1] / "src" / "troupe" / "train.py").read_text()
    assert "build_learner(LearnerSetup(" in source
    assert "OnPolicyLearner(" not in source and "OfflineLearner(" not in source and "family(" not in source


def test_only_a_learner_that_trains_on_rows_is_stepped_on_them():
    from troupe.algorithms.learner import row_learner
    from troupe.algorithms.learners.offline_loop import OfflineLearner

    assert not OfflineLearner.rolls_out and OnPolicyLearner.rolls_out
    offline, on_policy = object.__new__(OfflineLearner), object.__new__(OnPolicyLearner)
    assert row_learner(offline) is offline and row_learner(on_policy) is None
