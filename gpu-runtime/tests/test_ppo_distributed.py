"""A PPO critic trains through the same train backends as its actor: ppo with fsdp2 on 2 CPU ranks (gloo)
equals one process, the critic's metrics included (tolerance as test_distributed.py: 1e-5 relative)."""

import pytest
from test_distributed import RELATIVE, _run, _spec

pytestmark = pytest.mark.slow

CRITIC = ("reward/mean", "grad_norm", "value/loss", "returns/mean")


def test_ppo_with_an_fsdp2_critic_on_two_ranks_equals_one_process(tmp_path):
    one_spec, two_spec = _spec("torch", None), _spec("fsdp2", 2)
    for spec in (one_spec, two_spec):
        spec["algorithm"]["name"] = "ppo"
    one = _run(tmp_path / "one", one_spec)
    assert one.state == "succeeded", one.message
    two = _run(tmp_path / "two", two_spec)
    assert two.state == "succeeded", two.message
    for name in CRITIC:
        a, b = one.metrics(name), two.metrics(name)
        assert len(a) == len(b) > 0, (name, a, b)
        assert b == pytest.approx(a, rel=RELATIVE, abs=1e-9), name
