"""Run independent tile tasks on single-threaded worker threads instead of multi-threaded torch ops.

Why: each torch CPU op (a tile's matmul, exp, sub, ...) is one OpenMP parallel region ending in a
barrier. The tiled kernels issue ~10 of them per tile and ~150 tiles per pass at the issue's
shape; when the cores are shared with other processes, a descheduled thread stalls every barrier
(measured on the 2-core box under load ~9: a 1M-element `exp_` 32 ms with 2 OpenMP threads, 1.1 ms
with one; a 7-row `index_add_` 190 ms vs 6 us). Workers that each run whole tiles with one intra-op
thread have no barrier between tiles at all. Each worker has a fixed share of the tasks (see
`run_tasks`: the same split on every run, so results are bit-for-bit reproducible). The matmuls themselves are as fast single-threaded per core as MKL's
2-thread split of one matmul (measured 3.0 s vs 3.6 s for the same work under load).

`torch.set_num_threads` called inside a worker thread sets that thread's OpenMP/MKL thread count
only (they are thread-local); the process-wide default it also records is restored by the caller.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import torch

T = TypeVar("T")
R = TypeVar("R")

# Above this many workers the per-worker buffers (a few tiles and an O(N) row state each) stop
# paying for themselves on CPU; more cores than this still serve the workers' own matmuls.
MAX_WORKERS = 16

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


def _single_threaded_worker() -> None:
    torch.set_num_threads(1)


def worker_count(device: torch.device | None = None) -> int:
    """Workers a tiled pass uses: torch's intra-op thread count of the calling thread, capped; one
    on an accelerator (its kernels are asynchronous and already parallel)."""
    if device is not None and device.type != "cpu":
        return 1
    return max(1, min(torch.get_num_threads(), MAX_WORKERS))


def _get_pool(size: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size != size:
            if _pool is not None:
                _pool.shutdown(wait=True)
            _pool = ThreadPoolExecutor(size, thread_name_prefix="troupe-tiles", initializer=_single_threaded_worker)
            _pool_size = size
        return _pool


def run_tasks(tasks: Iterable[T], work: Callable[[Iterator[T]], R], workers: int) -> list[R]:
    """Call `work(its_tasks)` on `workers` threads and return their partial results in worker order.

    Worker k gets tasks k, k + workers, k + 2 workers, ... in that order: a fixed split, so each partial
    result (and the caller's merge, in worker order) is the same on every run with the same worker count.
    Workers that pulled from a shared queue balanced load better on a busy machine, but which tasks a
    worker summed depended on the scheduler, and so did the last bits of the log-probs, their gradients
    and every metric after them (the golden event streams differed between a quiet and a busy machine).
    One worker runs inline."""
    listed = list(tasks)
    if workers <= 1:
        return [work(iter(listed))]

    def body(k: int) -> R:
        # Grad mode is thread-local: without this, ops on inputs that require grad would try to
        # record a graph (and out= ops refuse to run).
        with torch.no_grad():
            return work(iter(listed[k::workers]))

    threads = torch.get_num_threads()
    pool = _get_pool(workers)
    try:
        futures = [pool.submit(body, k) for k in range(workers)]
        return [f.result() for f in futures]
    finally:
        # A new pool thread's set_num_threads(1) also lowered the process-wide default that fresh
        # threads start from; put the caller's back.
        torch.set_num_threads(threads)


def chunks(start: int, stop: int, step: int) -> list[tuple[int, int]]:
    """[(a, b), ...] covering start..stop in steps of `step`."""
    return [(a, min(stop, a + step)) for a in range(start, stop, step)]


__all__ = ["MAX_WORKERS", "chunks", "run_tasks", "worker_count"]
