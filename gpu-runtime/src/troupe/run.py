"""One run, start to finish, with the event protocol around the training loop.

`run_spec` never raises for a failed run: it reports it with events (an `error`, then exactly
one terminal `status`) and returns the exit code the CLI uses:
0 succeeded, 1 failed, 2 spec invalid or unsupported, 3 cancelled, 4 stopped after a step on
request (a checkpoint of that step was written; `--resume latest` continues it).
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from .events import EventWriter, stderr_echo
from .rewards.reward_api import merge_rewards
from .spec import SpecError, check_supported, load_spec, parse_spec_text
from .trackers import attach_trackers

EXIT_SUCCEEDED, EXIT_FAILED, EXIT_SPEC, EXIT_CANCELLED, EXIT_STOPPED = 0, 1, 2, 3, 4
_EXIT_OF_STATE = {"succeeded": EXIT_SUCCEEDED, "cancelled": EXIT_CANCELLED, "stopped": EXIT_STOPPED, "failed": EXIT_FAILED}


def exit_code_of(state: str) -> int:
    return _EXIT_OF_STATE[state]


class StopRequest:
    """Set from a signal handler; the loop checks it between steps."""

    def __init__(self) -> None:
        self.reason: str | None = None

    def set(self, reason: str = "a stop request") -> None:
        if self.reason is None:
            self.reason = reason

    def is_set(self) -> bool:
        return self.reason is not None


@dataclass
class RunResult:
    state: str  # succeeded | failed | cancelled | stopped
    exit_code: int
    message: str
    steps_completed: int = 0
    error: BaseException | None = None
    events: list[dict[str, Any]] | None = None  # when the writer kept them

    def metrics(self, name: str, actor: str | None = None) -> list[float]:
        """Per-step values of one metric, from kept events (handy in notebooks and tests)."""
        return [
            e["values"][name]
            for e in self.events or []
            if e["type"] == "metric" and name in e["values"] and (actor is None or e.get("actor") == actor)
        ]


def run_spec(
    spec: str | Path | Mapping[str, Any],
    events: EventWriter | None = None,
    work_dir: str | Path | None = None,
    stop: Any = None,
    control: Any = None,
    resume: str | Path | None = None,
    rewards: Sequence[Any] = (),
    ctx: Any = None,
) -> RunResult:
    """Validate `spec` (a path or a dict), run it, and report it through `events`.

    Without `events`, events are kept in memory (`RunResult.events`) and log lines echo to stderr.
    `work_dir` resolves relative dataset and model paths and holds checkpoints; it defaults to the
    spec file's folder (or the current folder for a dict).
    `control` (a `control.RunControl`) pauses/resumes/stops after a step; `resume` is a checkpoint
    folder or "latest" (the newest under `work_dir/checkpoints`).
    `rewards`: functions decorated with `@troupe.reward`, scored in this process (reward_api.py).
    A spec with several ranks (`placement.gpus`/`.processes`, or `cluster.kind: "ray"`) launches them and
    supervises them from here (launch/); `ctx` is given only inside a launched rank.
    """
    events = events if events is not None else EventWriter(keep=True, echo=stderr_echo)
    if work_dir is None:
        work_dir = Path(spec).resolve().parent if isinstance(spec, (str, Path)) else Path(os.getcwd())
    work_dir = Path(work_dir)
    # Checkpoints go here, and the reward sandbox binds it: a folder that does not exist yet would leave
    # every sandboxed reward failing (scored 0) instead of an empty folder to write into.
    work_dir.mkdir(parents=True, exist_ok=True)
    steps_done = 0
    try:
        library_rewards = {}
        if rewards:
            document = spec if isinstance(spec, Mapping) else parse_spec_text(Path(spec).read_text(encoding="utf-8"), str(spec))
            spec = merge_rewards(document, rewards)
            library_rewards = {f.name: f for f in rewards}
        validated = load_spec(spec)
        check_supported(validated, in_process=library_rewards)
        if ctx is None:  # the process that writes the run's events mirrors them (a rank never does)
            attach_trackers(validated, events, work_dir)
        from .launch.distributed import SINGLE, destroy_process_group, init_process_group, run_ranks  # torch: `import troupe` and `validate` stay light

        if ctx is None and (run_ranks(validated) > 1 or validated["cluster"]["kind"] == "ray"):
            if library_rewards:
                raise SpecError.at("rewards", "in-process reward functions cannot cross into launched ranks: use Python rewards in the spec")
            from .launch.ranks import launch_ranks  # torch, as above

            return launch_ranks(validated, events, work_dir, stop, control, resume)
        from .checkpointing import resolve_resume  # torch, as above
        from .host.device_choice import run_device_choice  # torch, as above
        from .host.system import resolve_device  # torch, as above
        from .train import train  # heavy imports (transformers) only once the spec is known to be good

        ctx = ctx or SINGLE
        resume_from = resolve_resume(work_dir, str(resume)) if resume is not None else None
        needs_group = any(a["training"]["backend"] == "fsdp2" and a["trainable"] for a in validated["actors"])
        created = init_process_group(ctx, resolve_device(run_device_choice(validated), ctx.local_rank), needs_group)
        try:
            state, message, steps_done = train(validated, events, work_dir, stop, control, resume_from, library_rewards, ctx)
        finally:
            if created:
                destroy_process_group()
    except SpecError as e:
        events.error(str(e), field=e.field)
        events.status("failed", f"invalid spec: {e}")
        return RunResult("failed", EXIT_SPEC, str(e), steps_done, e, events.events)
    except KeyboardInterrupt as e:  # library use without our signal handlers
        events.status("cancelled", "interrupted")
        return RunResult("cancelled", EXIT_CANCELLED, "interrupted", steps_done, e, events.events)
    except Exception as e:  # noqa: BLE001 - every failure must end in an error event and a status
        message = f"{type(e).__name__}: {e}"
        events.error(message, traceback=traceback.format_exc())
        events.status("failed", message)
        return RunResult("failed", EXIT_FAILED, message, steps_done, e, events.events)
    events.status(state, message)
    code = _EXIT_OF_STATE[state]
    return RunResult(state, code, message, steps_done, None, events.events)
