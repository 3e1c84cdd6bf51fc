"""A PPO critic trains through the same train backends as its actor: ppo with fsdp2 on 2 CPU ranks (gloo)
equals one process, the critic's metrics included (tolerance as test_distributed.py: 1e-5 relative)."""

import pytest
from test_distributed import RELATIVE, _run, _spec

pytestmark = pytest.mark.slow

CRITIC = ("reward/mean", "grad_norm", "value/loss", "returns/mean")


def test_ppo_with_an_fsdp2_critic_on_two_ranks_equals_one_process(tmp_path):
    one_spec, two_spec = _spec("torch", None), _spec("fsdp2", 2)
    for spec in (one_spec, two_spec):
        # valueNorm off: with it on, the first critic update fits targets whose batch mean is exactly 0 (the
        # statistics are that batch's), so the value head bias's gradient is rounding noise, and Adam's first
        # step (g / |g|) turns it into a full-size step whose sign follows the reduction order. One process and
        # two ranks then differ by ~1e-3 (measured), which says nothing about the backend. The statistics are
        # plain arithmetic on the batch every rank already shares (test_ppo_math.py tests them).
        spec["algorithm"].update({"name": "ppo", "valueNorm": False})
    one = _run(tmp_path / "one", one_spec)
    assert one.state == "succeeded", one.message
    two = _run(tmp_path / "two", two_spec)
    assert two.state == "succeeded", two.message
    for name in CRITIC:
        a, b = one.metrics(name), two.metrics(name)
        assert len(a) == len(b) > 0, (name, a, b)
        assert b == pytest.approx(a, rel=RELATIVE, abs=1e-9), name
