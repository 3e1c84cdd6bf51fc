"""Advantage normalisations and loss aggregations are registered by name (algorithms/grpo.py): the registries
hold exactly the contracts' names, and a registered function is what `policy_loss` / `group_advantages` run."""

import torch

from troupe.algorithms import grpo
from troupe.algorithms.names import LOSS_TYPES
from troupe.spec import runspec_schema


def test_the_registries_hold_the_contracts_names():
    training = runspec_schema()["properties"]["actors"]["items"]["properties"]["training"]["properties"]
    assert sorted(grpo.ADVANTAGE_NORMS) == sorted(training["advantageNorm"]["enum"])
    assert sorted(grpo.LOSS_AGGREGATIONS) == sorted(LOSS_TYPES)
    assert grpo.SEQUENCE_RATIO_LOSSES == {"gspo"} and grpo.TOKEN_NORMALISED_LOSSES == {"dapo"}


def test_a_registered_loss_is_the_one_policy_loss_runs(monkeypatch):
    monkeypatch.setitem(grpo.LOSS_AGGREGATIONS, "grpo", lambda per_token, m, max_len: (per_token * m).sum() * 0 + 42.0)
    logp = torch.zeros(2, 3)
    loss, _ = grpo.policy_loss(logp, logp, torch.tensor([1.0, -1.0]), torch.ones(2, 3), loss_type="grpo")
    assert float(loss) == 42.0


def test_an_unknown_name_is_refused():
    logp = torch.zeros(1, 2)
    for call in (lambda: grpo.policy_loss(logp, logp, torch.ones(1), torch.ones(1, 2), loss_type="nope"),
                 lambda: grpo.group_advantages(torch.ones(4), 2, "nope")):
        try:
            call()
        except ValueError as e:
            assert "nope" in str(e)
        else:
            raise AssertionError("accepted an unknown name")
