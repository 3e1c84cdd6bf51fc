"""DAPO: zero-variance groups, dynamic sampling, overlong filtering and penalty from the sampler's EOS."""

import pytest
import torch
from runtime_helpers import small_spec

from troupe import run_spec
from troupe.algorithms.dapo import OVERLONG_COMPONENT, apply_overlong_penalty, overlong_loss_mask, overlong_penalty, zero_variance_groups
from troupe.models.loading import build_tiny
from troupe.engines.rollout.sampling import sample


def test_zero_variance_groups_by_hand():
    rewards = torch.tensor([1.0, 1.0, 1.0, 0.0, 0.5, 0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0])
    assert zero_variance_groups(rewards, 4).tolist() == [False, True, True]
    with pytest.raises(ValueError, match="multiple of group_size"):
        zero_variance_groups(torch.zeros(6), 4)


def test_overlong_penalty_by_hand():
    # L = 10, C = 4: free up to 6 tokens, then -(len - 6) / 4 * 0.5, and -0.5 for a cut-off completion.
    lengths = torch.tensor([3, 6, 7, 9, 10, 10, 4])
    ended = torch.tensor([True, True, True, True, True, False, False])
    got = overlong_penalty(lengths, ended, max_new_tokens=10, buffer_tokens=4, penalty=0.5)
    torch.testing.assert_close(got, torch.tensor([0.0, 0.0, -0.125, -0.375, -0.5, -0.5, -0.5]))
    # Cut off is cut off, whatever the length says (a row of a batch is padded to the longest).


def test_overlong_penalty_is_its_own_component():
    totals, components = apply_overlong_penalty(
        [1.0, 0.5], [{"acc": 1.0}, {"acc": 0.5}], torch.tensor([2, 8]), torch.tensor([True, False]), 8, {"bufferTokens": 4, "penalty": 1.0}
    )
    assert totals == [1.0, -0.5]
    assert components == [{"acc": 1.0, OVERLONG_COMPONENT: 0.0}, {"acc": 0.5, OVERLONG_COMPONENT: -1.0}]


@pytest.fixture(scope="module")
def ended_and_cut_off():
    """Real samples of the tiny model, long enough that some draw EOS and some are cut off."""
    torch.manual_seed(0)
    tiny = build_tiny("tiny-char-2l")
    prompts = [tiny.tokenizer.encode("say a:") for _ in range(16)]
    rollout = sample(tiny.model, tiny.tokenizer, prompts, {"temperature": 1.0, "topP": 1.0, "topK": 0, "maxNewTokens": 48}, torch.device("cpu"))
    assert rollout.ended is not None
    assert 0 < int(rollout.ended.sum()) < 16, "seeded precondition: the batch must hold both kinds"
    return tiny, rollout


def test_ended_flags_come_from_the_sampled_tokens(ended_and_cut_off):
    tiny, rollout = ended_and_cut_off
    eos = tiny.tokenizer.eos_token_id
    for row, ended in enumerate(rollout.ended.tolist()):
        n = int(rollout.completion_mask[row].sum())
        assert ended == (eos in rollout.completion_ids[row].tolist())
        if ended:  # the mask stops at the EOS the sampler drew
            assert int(rollout.completion_ids[row, n - 1]) == eos
        else:  # every position is real: cut off at maxNewTokens
            assert n == 48


def test_overlong_filter_masks_only_cut_off_rows(ended_and_cut_off):
    _, rollout = ended_and_cut_off
    masked = overlong_loss_mask(rollout.completion_mask, rollout.ended)
    for row, ended in enumerate(rollout.ended.tolist()):
        expected = rollout.completion_mask[row] if ended else torch.zeros_like(rollout.completion_mask[row])
        assert torch.equal(masked[row], expected)


def _run(spec, tmp_path):
    result = run_spec(spec, work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    return result


def test_dynamic_sampling_replaces_zero_variance_groups(tmp_path):
    # One token per answer and a 0/1 reward: most groups of 4 are all wrong at the start.
    spec = small_spec(steps=3)
    spec["actors"][0]["sampling"]["maxNewTokens"] = 1
    spec["algorithm"]["dynamicSampling"] = {"enabled": True, "maxRounds": 4}
    result = _run(spec, tmp_path)
    dropped, resampled, kept = (result.metrics(f"dynamic_sampling/{k}") for k in ("dropped_groups", "resampled_groups", "kept_groups"))
    assert sum(dropped) > 0 and sum(resampled) > 0
    for d, r, k in zip(dropped, resampled, kept):
        assert 2 + r == d + k  # every group drawn is either dropped or kept
        assert k <= 2
    # Kept groups all carry signal: group-normalised advantages are +-~1, never all zero.
    for k, lo, hi in zip(kept, result.metrics("advantage/min"), result.metrics("advantage/max")):
        if k > 0:
            assert lo < 0 < hi


def test_dynamic_sampling_off_reports_nothing(tmp_path):
    spec = small_spec(steps=1)
    result = _run(spec, tmp_path)
    assert result.metrics("dynamic_sampling/dropped_groups") == []


def test_overlong_penalty_and_truncation_rate_in_a_run(tmp_path):
    spec = small_spec(steps=2)
    spec["actors"][0]["sampling"]["maxNewTokens"] = 48
    spec["algorithm"]["overlong"] = {"mode": "penalty", "bufferTokens": 8, "penalty": 1.0}
    result = _run(spec, tmp_path)
    rate, pen = result.metrics("truncation_rate"), result.metrics(f"reward/{OVERLONG_COMPONENT}")
    assert all(0 < r < 1 for r in rate), rate
    # A cut-off completion scores -1, so the mean penalty is at most -rate (the ramp only adds).
    for r, p in zip(rate, pen):
        assert p <= -r + 1e-9


def test_overlong_filter_run_trains_on_ended_completions_only(tmp_path):
    spec = small_spec(steps=2)
    spec["actors"][0]["sampling"]["maxNewTokens"] = 48
    spec["algorithm"]["overlong"] = {"mode": "filter"}
    filtered = _run(spec, tmp_path / "a")
    spec["algorithm"]["overlong"] = {"mode": "off"}
    plain = _run(spec, tmp_path / "b")
    # Same seed, same first batch: only the loss mask differs, so the step-1 loss must differ.
    assert filtered.metrics("truncation_rate")[0] == plain.metrics("truncation_rate")[0] > 0
    assert filtered.metrics("loss")[0] != plain.metrics("loss")[0]
