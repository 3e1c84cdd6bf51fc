"""Specs and readers shared by the runtime tests (a plain module: `conftest` is taken by tests/schedule)."""

import copy
import json
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def demo_input() -> dict:
    """DEMO_SPEC_INPUT from packages/contracts/src/demo.ts, as JSON (demo.filled.json is zod's parse of it)."""
    return json.loads((FIXTURES / "demo.input.json").read_text())


def small_spec(steps: int = 3, **trainer) -> dict:
    """The demo, shrunk to a few seconds: 2 prompts x 4 samples per step."""
    spec = copy.deepcopy(demo_input())
    spec["trainer"].update({"steps": steps, "promptsPerStep": 2, "episodesPerStep": 2, **trainer})
    spec["algorithm"]["groupSize"] = 4
    return spec


def read_events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
