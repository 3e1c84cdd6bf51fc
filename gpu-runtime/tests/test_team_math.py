"""The team learners' and RAE's math against hand computations: VDN's sum, QMIX's monotonic mix (every mixing
weight >= 0 and dV_tot/dV_i >= 0 by autograd, whatever the hypernetworks output), HAPPO's ratio product and RAE's
baseline update."""

import math

import torch

from troupe.algorithms.advantage_estimators import build_estimator
from troupe.spec.runspec_types import ActorTraining, Algorithm
from troupe.algorithms.happo_math import happo_factor, sequence_log_ratio
from troupe.algorithms.rae import RaeBaselines, rae_advantages, rae_update
from troupe.algorithms.value_mixing import QMixer, qmix_mix, vdn_mix


def test_vdn_is_the_sum_of_the_agents_values():
    values = torch.tensor([[0.5, -0.25, 1.0], [2.0, 3.0, -4.0]])
    assert vdn_mix(values).tolist() == [1.25, 1.0]


def test_qmix_mix_by_hand():
    # Two agents, embedding 2. Raw weights with negative entries: abs() makes them 1, 2 / 3, 1 and 0.5, 2.
    v = torch.tensor([1.0, -1.0])
    w1 = torch.tensor([[1.0, -2.0], [-3.0, 1.0]])
    b1 = torch.tensor([0.5, -4.0])
    w2 = torch.tensor([-0.5, 2.0])
    b2 = torch.tensor(0.25)
    # pre-activation: [1*1 + -1*3 + 0.5, 1*2 + -1*1 - 4] = [-1.5, -3]; elu: e^x - 1
    hidden = [math.exp(-1.5) - 1, math.exp(-3.0) - 1]
    want = 0.5 * hidden[0] + 2.0 * hidden[1] + 0.25
    assert math.isclose(float(qmix_mix(v, w1, b1, w2, b2)), want, rel_tol=1e-6)
    # With positive pre-activations elu is the identity: [3*1 + 2*3 + 0.5, 3*2 + 2*1 + 0.5] = [9.5, 8.5]
    assert math.isclose(float(qmix_mix(torch.tensor([3.0, 2.0]), w1, torch.tensor([0.5, 0.5]), w2, b2)), 0.5 * 9.5 + 2 * 8.5 + 0.25, rel_tol=1e-6)


def test_qmix_is_monotonic_in_every_agents_value():
    torch.manual_seed(0)
    mixer = QMixer(agents=3, state_dim=5, embed_dim=4)
    for p in mixer.parameters():  # large weights of both signs: the raw outputs are often negative
        torch.nn.init.normal_(p, std=3.0)
    values = torch.randn(64, 3, requires_grad=True)
    state = torch.randn(64, 5)
    w1, _, w2, _ = mixer.weights(state)
    assert (w1 < 0).any() and (w2 < 0).any(), "the test needs negative raw weights to mean anything"
    assert (w1.abs() >= 0).all() and (w2.abs() >= 0).all()
    total = mixer(values, state)
    (grad,) = torch.autograd.grad(total.sum(), values)
    assert grad.shape == (64, 3)
    assert (grad >= 0).all(), grad.min()
    assert (grad > 0).float().mean() > 0.9  # and it really depends on them


def test_happo_factor_is_the_product_of_the_earlier_agents_ratios():
    old = torch.tensor([[-1.0, -2.0, 0.0], [-0.5, -0.5, -0.5]])
    new = torch.tensor([[-0.5, -1.0, 9.0], [-1.5, -0.5, -0.5]])
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    log_ratio = sequence_log_ratio(new, old, mask)  # masked token 3 of row 0 does not count
    assert log_ratio.tolist() == [1.5, -1.0]
    first = happo_factor(torch.ones(2), log_ratio, clip=10.0)
    assert torch.allclose(first, torch.tensor([math.exp(1.5), math.exp(-1.0)]))
    # A second agent with ratios 2 and 0.5: the factor is the product of both agents' ratios.
    second = happo_factor(first, torch.log(torch.tensor([2.0, 0.5])), clip=10.0)
    assert torch.allclose(second, torch.tensor([2 * math.exp(1.5), 0.5 * math.exp(-1.0)]))
    # Clipped into [1/clip, clip]: 2 e^1.5 = 8.96 -> 4; 0.5 e^-1 = 0.18 -> 1/4
    clipped = happo_factor(first, torch.log(torch.tensor([2.0, 0.5])), clip=4.0)
    assert clipped.tolist() == [4.0, 0.25]


def test_rae_baseline_update_by_hand():
    rewards = torch.tensor([1.0, 0.0, 1.0, 1.0])
    assert rae_advantages(rewards, 0.25).tolist() == [0.75, -0.25, 0.75, 0.75]
    assert math.isclose(rae_update(0.25, rewards, decay=0.9), 0.9 * 0.25 + 0.1 * 0.75)
    seats = RaeBaselines(decay=0.5)
    # Step 1: baseline 0 (SPIRAL's start): advantages are the rewards; X's baseline -> 0.5 * 0.75
    assert seats.advantages("game/X", rewards).tolist() == [1.0, 0.0, 1.0, 1.0]
    assert seats.values == {"game/X": 0.375}
    # O's seat is its own: it still starts at 0.
    assert seats.advantages("game/O", torch.tensor([0.0, 1.0])).tolist() == [0.0, 1.0]
    # Step 2 for X: against 0.375, then 0.5 * 0.375 + 0.5 * 0.5
    assert seats.advantages("game/X", torch.tensor([0.0, 1.0])).tolist() == [-0.375, 0.625]
    assert seats.values["game/X"] == 0.4375


def test_the_estimators_by_name():
    group = build_estimator(Algorithm.from_dict({"advantage": "group"}))
    rewards = [[1.0, 0.0], [1.0, 1.0]]
    got = group.advantages(["e/a", "e/a"], rewards, 2, ActorTraining.from_dict({"advantageNorm": "none"}))
    assert got.tolist() == [0.5, -0.5, 0.0, 0.0]
    rae = build_estimator(Algorithm.from_dict({"advantage": "rae", "rae": {"decay": 0.5}}))
    assert rae.advantages(["e/a", "f/a"], rewards, 2, ActorTraining.from_dict({"advantageNorm": "group"})).tolist() == [1.0, 0.0, 1.0, 1.0]
    assert rae.state_dict() == {"baselines": {"e/a": 0.25, "f/a": 0.5}}
