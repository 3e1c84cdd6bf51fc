"""Process-level helpers: seeding, device choice, memory readings."""

from __future__ import annotations

import os
import random
import resource
import sys

import numpy as np
import torch

from .proc import proc_kb_bytes


# Torch's own choice, remembered so `cpuThreads: 0` means it even after an earlier run in this process set another.
_TORCH_DEFAULT_THREADS = torch.get_num_threads()


def set_cpu_threads(n: int) -> None:
    """`trainer.cpuThreads`: n intra-op threads, or torch's default for 0."""
    torch.set_num_threads(n if n > 0 else _TORCH_DEFAULT_THREADS)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device


def resolve_device(choice: str, local_rank: int = 0) -> torch.device:
    """The run's device on this rank: its own GPU (`cuda:<local rank>`) on a GPU host unless the spec says cpu."""
    if choice == "cuda" or (choice == "auto" and torch.cuda.is_available()):
        index = local_rank % max(torch.cuda.device_count(), 1)
        torch.cuda.set_device(index)
        return torch.device("cuda", index)
    return torch.device("cpu")


def rss_bytes() -> int:
    """Resident set size now (from /proc), or the peak RSS where /proc is missing (macOS)."""
    try:
        with open("/proc/self/statm") as f:
            resident_pages = int(f.read().split()[1])
        return resident_pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def peak_rss_bytes() -> int | None:
    """The highest RSS since the last `reset_memory_peaks` (Linux VmHWM), or None where it cannot be read."""
    return proc_kb_bytes("/proc/self/status", "VmHWM")


def reset_memory_peaks(device: torch.device) -> None:
    """Starts the next phase's peaks: CUDA's max allocated, and the host's peak RSS (writing 5 to
    /proc/self/clear_refs sets VmHWM back to the current RSS, Linux 4.0+; ignored where not allowed)."""
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def memory_readings(device: torch.device) -> list[dict[str, object]]:
    """One reading per device: host RSS (now, and its peak since the last reset where Linux tells it),
    plus allocated/reserved/peak for a CUDA device."""
    host: dict[str, object] = {"device": "cpu", "rssBytes": rss_bytes()}
    peak = peak_rss_bytes()
    if peak is not None:
        host["peakBytes"] = max(peak, int(host["rssBytes"]))  # type: ignore[call-overload]
    readings: list[dict[str, object]] = [host]
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        readings.append(
            {
                "device": f"cuda:{index}",
                "allocatedBytes": torch.cuda.memory_allocated(index),
                "reservedBytes": torch.cuda.memory_reserved(index),
                "peakBytes": torch.cuda.max_memory_allocated(index),
            }
        )
    return readings
