"""One rank of a multi-rank run: `python -m troupe.launch.rank_main SPEC --events FILE --control-file FILE ...`.

Started by torch.distributed.run (or a Ray worker), with RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT in
the environment. Rank 0 appends events to the supervisor's relay file and follows its control file; the
other ranks write no events. A rank whose run failed leaves `rank-<r>.failure.json` (its traceback) for
the supervisor, which names the rank that failed first.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from torch.distributed.elastic.multiprocessing.errors import record

from ..control import RunControl, follow_file
from .distributed import rank_context_from_env
from ..events import EventWriter, stderr_echo
from ..run import StopRequest, run_spec
from .ranks import die_with_parent


def failure_file(folder: Path, rank: int) -> Path:
    return folder / f"rank-{rank}.failure.json"


def write_failure(folder: Path, rank: int, message: str, trace: str) -> None:
    failure_file(folder, rank).write_text(json.dumps({"rank": rank, "message": message, "traceback": trace, "time": time.time()}), encoding="utf-8")


def run_rank(spec: Any, rank_dir: Path, events_path: Path | None, control_path: Path | None, work_dir: Path, seq_start: int, resume: str | None, stop: Any = None) -> int:
    ctx = rank_context_from_env()
    stop = stop or StopRequest()
    stream = events_path.open("a", encoding="utf-8", buffering=1) if ctx.is_main and events_path is not None else None
    events = EventWriter(stream, seq_start=seq_start, echo=stderr_echo if ctx.is_main else None)
    control = None
    if ctx.is_main and control_path is not None:
        control = RunControl()
        follow_file(control_path, control)
    try:
        result = run_spec(spec, events=events, work_dir=work_dir, stop=stop, control=control, resume=resume, ctx=ctx)
    finally:
        if stream is not None:
            stream.close()
    if result.state == "failed":
        trace = "".join(traceback.format_exception(result.error)) if result.error is not None else result.message
        write_failure(rank_dir, ctx.rank, result.message, trace)
    return result.exit_code


@record
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m troupe.launch.rank_main")
    parser.add_argument("spec", type=Path)
    parser.add_argument("--rank-dir", type=Path, required=True)
    parser.add_argument("--events", type=Path)
    parser.add_argument("--control-file", type=Path)
    parser.add_argument("--work-dir", type=Path, required=True)
    parser.add_argument("--seq-start", type=int, default=1)
    parser.add_argument("--resume")
    args = parser.parse_args(argv)
    die_with_parent()  # torchrun gone (killed): so is this rank
    stop = StopRequest()

    def handler(signum: int, _frame: object) -> None:
        stop.set(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    try:
        # A fault injected by tests of the supervisor (a rank that dies at start); never set in a real run.
        if os.environ.get("TROUPE_TEST_CRASH_RANK") == os.environ.get("RANK"):
            raise RuntimeError(f"injected crash of rank {os.environ.get('RANK')} (TROUPE_TEST_CRASH_RANK)")
        spec = json.loads(args.spec.read_text(encoding="utf-8"))
        return run_rank(spec, args.rank_dir, args.events, args.control_file, args.work_dir, args.seq_start, args.resume, stop)
    except BaseException as e:  # noqa: BLE001 - the supervisor reports the first rank that failed, with this traceback
        write_failure(args.rank_dir, int(os.environ.get("RANK", "0")), f"{type(e).__name__}: {e}", traceback.format_exc())
        raise


if __name__ == "__main__":
    os.environ.setdefault("TROUPE_RANK_CHILD", "1")
    sys.exit(main())
