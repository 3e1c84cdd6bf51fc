import math

import pytest

from troupe.algorithms.lr_schedule import lr_at


def test_constant_with_warmup():
    assert [lr_at(s, 1.0, "constant", 4, 10) for s in (1, 2, 4, 5, 10)] == [0.25, 0.5, 1.0, 1.0, 1.0]


def test_linear_decays_over_the_real_steps_and_never_hits_zero():
    lrs = [lr_at(s, 1.0, "linear", 0, 4) for s in range(1, 5)]
    assert lrs == pytest.approx([1.0, 0.75, 0.5, 0.25])


def test_cosine_after_warmup():
    total, warmup = 12, 2
    assert lr_at(2, 1.0, "cosine", warmup, total) == 1.0  # end of warmup
    assert lr_at(3, 1.0, "cosine", warmup, total) == 1.0  # first decay step
    assert lr_at(8, 1.0, "cosine", warmup, total) == pytest.approx(0.5 * (1 + math.cos(math.pi * 0.5)))
    assert 0 < lr_at(12, 1.0, "cosine", warmup, total) < 0.05


def test_steps_are_one_based():
    with pytest.raises(ValueError):
        lr_at(0, 1.0, "constant", 0, 10)
