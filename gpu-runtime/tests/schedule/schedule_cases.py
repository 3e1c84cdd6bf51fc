"""Loads the conformance suite, which lives in packages/dsl/conformance (vitest runs it too)."""

from __future__ import annotations

import json
from pathlib import Path

CONFORMANCE = Path(__file__).resolve().parents[3] / "packages" / "dsl" / "conformance"


def load_cases():
    """(file name, case) pairs from every conformance file but prng.json."""
    paths = sorted(p for p in CONFORMANCE.glob("*.json") if p.name != "prng.json")
    return [(path.name, case) for path in paths for case in json.loads(path.read_text("utf-8"))["cases"]]


def load_prng():
    return json.loads((CONFORMANCE / "prng.json").read_text("utf-8"))
