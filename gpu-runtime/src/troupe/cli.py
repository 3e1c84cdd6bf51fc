"""`python -m troupe run SPEC.json [--events-fd N | --events FILE] [--seq-start N] [--work-dir DIR]
[--control-fd N | --control-file PATH] [--resume CHECKPOINT|latest]`

Events go, one JSON object per line, to the file descriptor or file given (stdout when neither);
human-readable log lines go to stderr. Control commands (`{"command": "pause"}`, `"resume"`,
`"stop_after_step"`) come one per line from the inherited fd (the runner) or a file/FIFO that is
followed as it grows (by hand: `echo '{"command":"pause"}' >> control.jsonl`). `--resume latest`
continues from the newest checkpoint in the work dir's `checkpoints/`. `python -m troupe validate SPEC.json` prints the spec
with defaults filled, or the field-named problems (exit 2).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path
from typing import TextIO

from .control import RunControl, follow_file, follow_stream
from .events import EventWriter, stderr_echo
from .run import EXIT_SPEC, StopRequest, run_spec
from .spec import SpecError, check_supported, load_spec


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m troupe", description="Troupe runtime: run a RunSpec.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a RunSpec and report events")
    run.add_argument("spec", help="path to the RunSpec JSON")
    where = run.add_mutually_exclusive_group()
    where.add_argument("--events-fd", type=int, help="write events to this inherited file descriptor")
    where.add_argument("--events", type=Path, help="write events to this file (created or truncated)")
    run.add_argument("--seq-start", type=int, default=1, help="seq of the first event (default 1)")
    run.add_argument("--work-dir", type=Path, help="folder for relative paths and checkpoints (default: the spec's folder)")
    control = run.add_mutually_exclusive_group()
    control.add_argument("--control-fd", type=int, help="read control commands (JSON lines) from this inherited file descriptor")
    control.add_argument("--control-file", type=Path, help="follow this file or FIFO for control commands (JSON lines)")
    run.add_argument("--resume", metavar="CHECKPOINT", help='continue from a checkpoint folder, or "latest" in the work dir')
    check = sub.add_parser("validate", help="fill defaults and check a RunSpec without running it")
    check.add_argument("spec", help="path to the RunSpec JSON")
    caps = sub.add_parser("capabilities", help="what this runtime can run on this host (GPUs, engines, backends, sandbox)")
    caps.add_argument("--json", action="store_true", help="one JSON object (what runners publish)")
    return parser


def _open_events(args: argparse.Namespace) -> TextIO:
    if args.events_fd is not None:
        return os.fdopen(args.events_fd, "w", encoding="utf-8", buffering=1)
    if args.events is not None:
        return args.events.open("w", encoding="utf-8", buffering=1)
    return sys.stdout


def _install_stop_handlers(stop: StopRequest) -> None:
    def handler(signum: int, _frame: object) -> None:
        name = signal.Signals(signum).name
        # No event written here: the loop reports the cancellation once the current step is done.
        print(f"[info] {name} received: finishing the current step, then stopping", file=sys.stderr, flush=True)
        stop.set(name)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "capabilities":
        from .host.capabilities import capabilities  # CLI startup: the engine, GPU and sandbox probes load for this command only

        found = capabilities()
        if args.json:
            print(json.dumps(found))
        else:
            for key, value in found.items():
                print(f"{key}: {value}")
        return 0
    if args.command == "validate":
        try:
            spec = load_spec(args.spec)
            check_supported(spec)
        except SpecError as e:
            for issue in e.issues:
                print(f"{issue.path}: {issue.message}", file=sys.stderr)
            return EXIT_SPEC
        print(json.dumps(spec, indent=2))
        return 0
    if args.seq_start < 1:
        print("--seq-start must be >= 1", file=sys.stderr)
        return EXIT_SPEC
    stop = StopRequest()
    _install_stop_handlers(stop)
    stream = _open_events(args)
    events = EventWriter(stream, seq_start=args.seq_start, echo=stderr_echo)
    control = RunControl()
    if args.control_fd is not None:
        follow_stream(os.fdopen(args.control_fd, "r", encoding="utf-8"), control)
    elif args.control_file is not None:
        follow_file(args.control_file, control)
    result = run_spec(args.spec, events=events, work_dir=args.work_dir, stop=stop, control=control, resume=args.resume)
    if stream is not sys.stdout:
        stream.close()
    return result.exit_code


if __name__ == "__main__":
    sys.exit(main())
