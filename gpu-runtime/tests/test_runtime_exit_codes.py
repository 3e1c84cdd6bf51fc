"""The web's words for the runtime's exit codes (packages/contracts/src/runtimeExit.ts) name the same
codes run.py exits with, so a log line's "exited with code 4 (stopped …)" is never a wrong guess."""

from __future__ import annotations

import re
from pathlib import Path

from troupe import run

TABLE = (Path(__file__).resolve().parents[2] / "packages/contracts/src/runtimeExit.ts").read_text()


def test_every_exit_code_has_words_for_its_own_state() -> None:
    described = {int(code): state for code, state in re.findall(r'^\s*(\d+): \{ state: "(\w+)"', TABLE, re.M)}
    assert described == {
        run.EXIT_SUCCEEDED: "succeeded",
        run.EXIT_FAILED: "failed",
        run.EXIT_SPEC: "spec",
        run.EXIT_CANCELLED: "cancelled",
        run.EXIT_STOPPED: "stopped",
    }
    for state in ("succeeded", "failed", "cancelled", "stopped"):
        assert described[run.exit_code_of(state)] == state
