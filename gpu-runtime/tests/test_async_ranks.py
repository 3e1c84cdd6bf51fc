"""Asynchronous rollouts with several trainer ranks and sharded backends (issue #28 item 1): each rank runs its own
producer, as each rank of the synchronous loop samples; a sharded actor's producer copy is rebuilt from its spec and
filled with the gathered full parameters (rollout/full_weights.py). 2 CPU ranks over gloo, the demo's tiny model."""

import copy
import types
from pathlib import Path

import pytest
import torch
from runtime_helpers import small_spec
from test_async_rollout import STALENESS, VARIED, episodes, per_step, wd

from troupe.run import run_spec

pytestmark = pytest.mark.slow

RELATIVE = 1e-5  # fsdp2 over 2 ranks against one process: the tolerances of test_distributed.py
COMPARED = ("reward/mean", "grad_norm", "clip_frac", "entropy", "completion_len")


def spec(steps: int, k: int | None, processes: int | None = 2, backend: str = "torch", **trainer) -> dict:
    s = small_spec(steps=steps, **trainer)
    s["rewards"][0] = copy.deepcopy(VARIED)  # varies within groups: real updates
    actor = s["actors"][0]
    actor["training"]["backend"] = backend
    if processes:
        actor["placement"] = {"processes": processes}
    if k is not None:
        s["algorithm"]["async"] = {"maxStaleness": k}
    return s


def test_k0_with_two_ranks_is_the_synchronous_two_rank_run_bit_for_bit(tmp_path: Path):
    sync = run_spec(spec(3, None), work_dir=wd(tmp_path / "sync"))
    k0 = run_spec(spec(3, 0), work_dir=wd(tmp_path / "k0"))
    assert sync.state == k0.state == "succeeded", (sync.message, k0.message)
    assert k0.metrics("staleness/max") == [0.0, 0.0, 0.0]
    want, got = per_step(sync.events), per_step(k0.events, drop=STALENESS)
    assert sorted(got) == sorted(want) and len(want) == 3
    for key in want:  # no tolerance: the same floats
        assert got[key] == want[key], (key, got[key], want[key])
    assert episodes(k0.events) == episodes(sync.events)


def test_k1_with_two_ranks_stays_within_k_and_resumes_exactly_with_batches_in_flight(tmp_path: Path):
    straight = run_spec(spec(4, 1, checkpointEvery=2), work_dir=wd(tmp_path / "straight"))
    assert straight.state == "succeeded", straight.message
    logs = [e["message"] for e in straight.events if e["type"] == "log"]
    assert any("producer process" in m for m in logs) and any("2 ranks" in m for m in logs), logs
    # The batch of step t is sampled after max(0, t - 2) updates: the lag reaches K = 1 and stays.
    assert straight.metrics("staleness/max") == straight.metrics("staleness/mean") == [0.0, 1.0, 1.0, 1.0]
    step2 = tmp_path / "straight" / "checkpoints" / "step-2"
    saved = [torch.load(step2 / name, weights_only=False) for name in ("in_flight.pt", "in_flight.rank1.pt")]
    # Each rank's producer had made step 3's batch (sampled after 1 update) when step 2 was saved.
    assert [[(b["step"], b["version"]) for b in s["batches"]] for s in saved] == [[(3, 1)], [(3, 1)]]

    resumed = run_spec(spec(4, 1, checkpointEvery=2), work_dir=wd(tmp_path / "straight"), resume="checkpoints/step-2")
    assert resumed.state == "succeeded", resumed.message
    want = {key: v for key, v in per_step(straight.events).items() if key[0] > 2}
    assert per_step(resumed.events) == want and len(want) == 2
    assert episodes(resumed.events) == [e for e in episodes(straight.events) if e[0] > 2]


def test_fsdp2_two_ranks_k1_samples_with_the_gathered_weights(tmp_path: Path):
    """The sharded run's producers sample from rebuilt copies filled with the gathered parameters; one process
    with the plain torch backend samples from the trainer's module itself. Same weights (up to the sharded sums'
    last bits): the same episodes, the same metrics within test_distributed.py's tolerances."""
    one = run_spec(spec(3, 1, processes=None), work_dir=wd(tmp_path / "one"))
    two = run_spec(spec(3, 1, backend="fsdp2"), work_dir=wd(tmp_path / "fsdp2"))
    assert one.state == two.state == "succeeded", (one.message, two.message)
    assert any("backend fsdp2, fp32, world size 2" in e.get("message", "") for e in two.events)
    assert two.metrics("staleness/max") == [0.0, 1.0, 1.0]
    assert episodes(two.events) == episodes(one.events)
    for name in COMPARED:
        a, b = one.metrics(name), two.metrics(name)
        assert len(a) == len(b) == 3 and b == pytest.approx(a, rel=RELATIVE, abs=1e-12), (name, a, b)


def test_fsdp2_two_ranks_k0_thread_producer_matches_the_synchronous_sharded_run(tmp_path: Path):
    """K = 0 keeps the thread producer: its copy is rebuilt and filled with the gathered parameters, and every
    publish gathers again. The synchronous sharded run samples from FSDP2's unsharded parameters: the same values."""
    sync = run_spec(spec(3, None, backend="fsdp2"), work_dir=wd(tmp_path / "sync"))
    k0 = run_spec(spec(3, 0, backend="fsdp2"), work_dir=wd(tmp_path / "k0"))
    assert sync.state == k0.state == "succeeded", (sync.message, k0.message)
    assert any("producer thread" in e.get("message", "") for e in k0.events)
    assert k0.metrics("staleness/max") == [0.0, 0.0, 0.0]
    assert episodes(k0.events) == episodes(sync.events)
    for name in COMPARED:
        a, b = sync.metrics(name), k0.metrics(name)
        assert len(a) == len(b) == 3 and b == pytest.approx(a, rel=RELATIVE, abs=1e-12), (name, a, b)


def test_deepspeed_standin_copy_and_slots_hold_the_gathered_weights():
    """STAND-IN for DeepSpeed ZeRO-3 (tests/deepspeed_standin.py; DeepSpeed is not installed here): the producer's
    copy of a sharded actor is rebuilt from its spec and filled through GatheredParameters, and after an update
    what a publish writes into a weights slot is the gathered parameters, bit for bit."""
    from test_deepspeed_backend import run_update, standin_backend

    from troupe.rollout.async_process import WeightSlots
    from troupe.rollout.full_weights import plain_copy, shards, trained_tensors

    backend = standin_backend()
    document = {"name": "student", "model": {"source": "tiny", "preset": "tiny-char-2l"}}
    actor = types.SimpleNamespace(
        name="student", index=0, spec=document, backend=backend, device=torch.device("cpu"),
        loaded=types.SimpleNamespace(model=backend.model), section=types.SimpleNamespace(training=types.SimpleNamespace(lora=None)),
    )
    assert shards(actor)
    before = torch.get_rng_state()
    backend.engine.calls.clear()
    copied = plain_copy(actor, Path("."))
    assert torch.equal(torch.get_rng_state(), before)  # rebuilding draws nothing from the run's generator
    assert any(name == "gather" for name, _ in backend.engine.calls)  # through GatheredParameters, not a read behind it
    gathered = dict(backend.full_parameters())
    assert set(dict(copied.named_parameters())) == set(gathered)
    for name, p in copied.named_parameters():
        assert torch.equal(p, gathered[name]), name

    run_update(backend, micro=2)  # the trainer moves on: the copy is now one update behind
    changed = trained_tensors(actor)
    assert any(not torch.equal(changed[n], p) for n, p in copied.named_parameters())
    slots = WeightSlots.create({"student": changed}, 1)
    try:
        slots.write(0, {"student": trained_tensors(actor)})
        slots.read(0, {"student": copied})
    finally:
        slots.close(unlink=True)
    gathered = dict(backend.full_parameters())
    for name, p in copied.named_parameters():
        assert torch.equal(p, gathered[name]), name


def test_a_rank_without_its_in_flight_file_refuses_to_resume(tmp_path: Path):
    """Rank 0 saved batches in flight and rank 1 did not (another world size, or a checkpoint cut short): rank 1's
    producer would start elsewhere in the schedule than rank 0's, so resuming stops with what is missing."""
    from troupe.rollout.async_rollout import load_in_flight

    torch.save({"batches": []}, tmp_path / "in_flight.pt")
    assert load_in_flight(tmp_path, [], 0) == ([], None)
    with pytest.raises(FileNotFoundError, match="in_flight.rank1.pt"):
        load_in_flight(tmp_path, [], 1)
    torch.save({"batches": []}, tmp_path / "in_flight.rank1.pt")
    assert load_in_flight(tmp_path, [], 1) == ([], None)


def test_a_collaborative_run_on_two_ranks_with_k1_is_the_one_process_run(tmp_path: Path):
    """Whole multi-turn episodes (every turn of both actors) produced ahead on each rank: staleness per actor,
    and the same episodes and metrics as one process (data parallel sums: test_distributed.py's tolerance)."""
    from test_async_multi_turn import ACTORS, collaborative, staleness_per_actor

    def make(folder: Path, processes: int | None) -> dict:
        s = collaborative(folder, steps=3, k=1)
        for actor in s["actors"]:
            if processes:
                actor["placement"] = {"processes": processes}
        return s

    one = run_spec(make(tmp_path / "one", None), work_dir=tmp_path / "one")
    two = run_spec(make(tmp_path / "two", 2), work_dir=tmp_path / "two")
    assert one.state == two.state == "succeeded", (one.message, two.message)
    assert staleness_per_actor(two.events) == {a: [0.0, 1.0, 1.0] for a in ACTORS}
    assert episodes(two.events) == episodes(one.events) and len(episodes(one.events)) > 0
    for actor in ACTORS:
        for name in ("reward/mean", "grad_norm", "loss"):
            a, b = one.metrics(name, actor), two.metrics(name, actor)
            assert len(a) == len(b) == 3 and b == pytest.approx(a, rel=RELATIVE, abs=1e-7), (actor, name, a, b)
