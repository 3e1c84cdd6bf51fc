"""The tiled passes on several single-threaded workers: same numbers as one worker, the caller's
torch thread count and grad mode untouched, errors surfaced, every task run exactly once."""

import threading

import pytest
import torch

from troupe_kernels import token_logprobs
from troupe_kernels.tile_workers import chunks, run_tasks, worker_count


def _inputs(n=40, hidden=24, vocab=997, seed=0):
    g = torch.Generator().manual_seed(seed)
    h = torch.randn(n, hidden, generator=g)
    w = torch.randn(vocab, hidden, generator=g) / hidden**0.5
    t = torch.randint(0, vocab, (n,), generator=g)
    t[5] = -100
    return h, w, t


def _fwd_bwd(h, w, t, threads):
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        assert worker_count() == threads
        hg, wg = h.clone().requires_grad_(), w.clone().requires_grad_()
        lp, ent = token_logprobs(hg, wg, t, temperature=0.7, return_entropy=True, chunk_size=16, tile_elements=16 * 64)
        up = torch.linspace(-1, 1, h.shape[0])
        ((lp * up).sum() + (ent * up.flip(0)).sum()).backward()
        after = torch.get_num_threads()
        return (lp, ent, hg.grad, wg.grad), after
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("threads", [2, 3])
def test_several_workers_match_one_worker(threads):
    h, w, t = _inputs()
    one, _ = _fwd_bwd(h, w, t, 1)
    many, after = _fwd_bwd(h, w, t, threads)
    # Only the summation order differs (which vocab blocks each worker summed).
    for a, b in zip(one, many):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)
    assert after == threads  # the caller's intra-op thread count survives the pool's workers


def test_the_same_bits_on_every_run_however_the_scheduler_delays_a_worker(monkeypatch):
    """Each worker's share of the vocab blocks is fixed, so a worker slowed by a busy core changes nothing:
    with a shared queue the other worker took more blocks and the last bits of log-probs, entropy and both
    gradients followed the scheduler (golden event streams differed between a quiet and a busy machine)."""
    import time

    from troupe_kernels import tiled_torch

    h, w, t = _inputs()
    plain, _ = _fwd_bwd(h, w, t, 2)
    f32 = tiled_torch._f32
    slowed: set[int] = set()

    def slow_first_worker(x):  # called once per vocab block inside a worker: stall one thread's first block
        me = threading.get_ident()
        if threading.current_thread().name.startswith("troupe-tiles") and not slowed:
            slowed.add(me)
        if me in slowed:
            time.sleep(0.01)
        return f32(x)

    monkeypatch.setattr(tiled_torch, "_f32", slow_first_worker)
    delayed, _ = _fwd_bwd(h, w, t, 2)
    assert slowed, "the delay never ran inside a worker"
    for a, b in zip(plain, delayed):
        assert torch.equal(a, b)


def test_grad_mode_of_the_caller_is_kept_and_workers_record_no_graph():
    h, w, t = _inputs()
    hg = h.clone().requires_grad_()
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        lp = token_logprobs(hg, w, t, chunk_size=8, tile_elements=8 * 100)
    finally:
        torch.set_num_threads(before)
    assert torch.is_grad_enabled()
    assert lp.requires_grad and lp.grad_fn is not None


def test_run_tasks_runs_each_task_once_and_raises_worker_errors():
    seen: list[int] = []
    lock = threading.Lock()

    def work(tasks):
        mine = []
        for task in tasks:
            mine.append(task)
            with lock:
                seen.append(task)
        return mine

    parts = run_tasks(range(50), work, workers=3)
    assert sorted(seen) == list(range(50))
    assert sorted(x for p in parts for x in p) == list(range(50))

    def boom(tasks):
        for task in tasks:
            if task == 7:
                raise RuntimeError("tile 7 failed")

    with pytest.raises(RuntimeError, match="tile 7 failed"):
        run_tasks(range(20), boom, workers=2)


def test_chunks_cover_the_range():
    assert chunks(0, 10, 4) == [(0, 4), (4, 8), (8, 10)]
    assert chunks(0, 0, 4) == []


def test_workers_share_one_tile_budget():
    from troupe_kernels import plan_tiles

    rows1, cols1 = plan_tiles(16384, 151936, workers=1)
    rows2, cols2 = plan_tiles(16384, 151936, workers=2)
    assert (rows1, cols1) == (512, 2048)
    assert rows2 == 512 and 2 * rows2 * cols2 <= 1 << 20  # both workers' tiles: at most 4 MiB of float32
    assert plan_tiles(10, 7, tile_elements=3, workers=16) == (10, 1)  # never below one column

