"""The conformance suite shared with packages/dsl (vitest runs the same files)."""

from __future__ import annotations

import math

import pytest
from schedule_cases import load_cases, load_prng

from troupe.schedule import ERROR_KINDS, SplitMix64, check, format_spec, sample_many, stats, to_dict

CASES = load_cases()
PRNG = load_prng()

_STATS_KEYS = {
    "minTurns": "min_turns",
    "maxTurns": "max_turns",
    "expectedTurns": "expected_turns",
    "maxActorsPerTurn": "max_actors_per_turn",
}


def _stats_as_json(s):
    out = {key: getattr(s, attr) for key, attr in _STATS_KEYS.items()}
    out["actors"] = {
        name: {"minTurns": a.min_turns, "maxTurns": a.max_turns, "expectedTurns": a.expected_turns} for name, a in s.actors.items()
    }
    return out


def _close(a, b):
    """Floats as computed by the same operations in both languages; a tolerance only guards printing."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    return a == b


@pytest.mark.parametrize("file,case", CASES, ids=[f"{f}:{c['name']}" for f, c in CASES])
def test_conformance_case(file, case):
    node, errors = check(case["spec"], case["actors"], case.get("maxTurns", 1024))
    if "errors" in case:
        got = [{"kind": e.kind, "line": e.line, "column": e.column, "message": e.message} for e in errors]
        want = [{k: e[k] for k in ("kind", "line", "column", "message")} for e in case["errors"]]
        assert got == want
        for e, expected in zip(errors, case["errors"]):
            if "offset" in expected:
                assert e.span.start.offset == expected["offset"]
        return
    assert errors == []
    if "seed" in case:
        schedules = sample_many(node, int(case["seed"]), case.get("n", 1), case["actors"], case.get("maxTurns", 1024))
        assert schedules == case["schedules"]
    if "format" in case:
        assert format_spec(node) == case["format"]
    if "ast" in case:
        assert to_dict(node) == case["ast"]
    if "stats" in case:
        got = _stats_as_json(stats(node, case["actors"]))
        for key, value in case["stats"].items():
            assert _close(got[key], value), (key, got[key], value)


def test_every_error_kind_is_covered():
    seen = {e["kind"] for _, c in CASES for e in c.get("errors", [])}
    assert set(ERROR_KINDS) - seen == set()
    assert len(CASES) >= 40


@pytest.mark.parametrize("vector", PRNG["u64"], ids=[v["seed"] for v in PRNG["u64"]])
def test_splitmix64_matches_reference(vector):
    rng = SplitMix64(int(vector["seed"]))
    assert [str(rng.next_u64()) for _ in vector["outputs"]] == vector["outputs"]


@pytest.mark.parametrize("draw", PRNG["draws"], ids=[d["name"] for d in PRNG["draws"]])
def test_draws(draw):
    rng = SplitMix64(int(draw["seed"]))
    got = []
    for op, *args in draw["ops"]:
        got.append({"below": rng.below, "between": rng.between, "weighted": rng.weighted}[op](*args))
    assert got == draw["expect"]
