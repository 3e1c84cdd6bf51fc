"""Specs and readers shared by the runtime tests (a plain module: `conftest` is taken by tests/schedule)."""

import copy
import json
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def demo_input() -> dict:
    """DEMO_SPEC_INPUT from packages/contracts/src/demo.ts, as JSON (demo.filled.json is zod's parse of it)."""
    return json.loads((FIXTURES / "demo.input.json").read_text())


# One torch thread: on a shared 2-core machine, two OpenMP threads per test process oversubscribe
# the cores and tiny-model steps slow down by 10x or more; one thread loses nothing at this size.
TEST_THREADS = 1


def small_spec(steps: int = 3, **trainer) -> dict:
    """The demo, shrunk to a few seconds: 2 prompts x 4 samples per step."""
    spec = copy.deepcopy(demo_input())
    spec["trainer"].update({"steps": steps, "promptsPerStep": 2, "episodesPerStep": 2, "cpuThreads": TEST_THREADS, **trainer})
    spec["algorithm"]["groupSize"] = 4
    return spec


def read_events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def check_protocol(events, validator, seq_start=1):
    """Every event valid; seqs contiguous from seq_start; exactly one terminal status, last
    (`paused`/`running` statuses from the control channel may come before it)."""
    for e in events:
        errors = sorted(validator.iter_errors(e), key=str)
        assert not errors, (e, [er.message for er in errors])
    assert [e["seq"] for e in events] == list(range(seq_start, seq_start + len(events)))
    statuses = [e for e in events if e["type"] == "status" and e["state"] not in ("paused", "running")]
    assert len(statuses) == 1 and events[-1] is statuses[0]
    assert statuses[0]["state"] in ("succeeded", "failed", "cancelled", "stopped")
