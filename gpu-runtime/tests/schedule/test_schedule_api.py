"""The Python API around the shared behaviour: exceptions, options, spans."""

from __future__ import annotations

import pytest

from troupe.schedule import (
    Actor,
    DslError,
    Position,
    Repeat,
    Sequence,
    Span,
    SpecError,
    check,
    compile_spec,
    did_you_mean,
    edit_distance,
    parse,
    sample,
    sample_many,
    stats,
    validate,
)


def test_parse_raises_spec_error_with_positioned_errors():
    with pytest.raises(SpecError) as info:
        parse("Bob -> (Alice")
    [error] = info.value.errors
    assert (error.kind, error.line, error.column) == ("unbalanced_paren", 1, 8)
    assert error.to_json() == {"kind": "unbalanced_paren", "message": 'this "(" is never closed', "line": 1, "column": 8}
    assert "1:8: this \"(\" is never closed [unbalanced_paren]" in str(info.value)


def test_spans_are_kept_but_ignored_by_equality():
    node = parse("Bob ->\n  Alice*2")
    assert node == Sequence((Actor("Bob"), Repeat(Actor("Alice"), 2, 2)))
    assert node.items[1].span == Span(Position(9, 2, 3), Position(16, 2, 10))


def test_compile_spec_is_what_a_runtime_calls_before_its_first_episode():
    node = compile_spec("Bob -> Alice -> (Bob/Alice)*5", ["Bob", "Alice"], max_turns=16)
    assert len(sample(node, 7, ["Bob", "Alice"], max_turns=16)) == 7
    with pytest.raises(SpecError) as info:
        compile_spec("Bob -> Alice -> (Bob/Alice)*20", ["Bob", "Alice"], max_turns=16)
    assert [e.kind for e in info.value.errors] == ["too_many_turns"]


def test_check_never_raises_for_bad_text():
    node, errors = check("A -> ", ["A"])
    assert node is None and [e.kind for e in errors] == ["unexpected_end"]


def test_validate_rejects_a_bad_max_turns():
    with pytest.raises(ValueError):
        validate(parse("A"), ["A"], max_turns=0)


def test_seeds_must_lie_in_0_to_2_pow_64():
    node = parse("A")
    with pytest.raises(ValueError):
        sample(node, -1, ["A"])
    with pytest.raises(ValueError):
        sample(node, 2**64, ["A"])
    with pytest.raises(TypeError):
        sample(node, 1.5, ["A"])


def test_schedule_i_of_sample_many_uses_seed_plus_i():
    node = parse("(A / B)*(1..4) -> *")
    many = sample_many(node, 41, 5, ["A", "B", "C"])
    assert [sample(node, 41 + i, ["A", "B", "C"]) for i in range(5)] == many


def test_stats_are_exact():
    s = stats(parse("(A:3 / B:1) -> C*(1..3)"), ["A", "B", "C"])
    assert (s.min_turns, s.max_turns, s.expected_turns, s.max_actors_per_turn) == (2, 4, 3, 1)
    assert s.actors["A"].expected_turns == 0.75


def test_did_you_mean():
    assert edit_distance("bbo", "bob") == 1
    assert did_you_mean("bob", ["Alice", "Bob"]) == "Bob"
    assert did_you_mean("Zed", ["Bob"]) is None


def test_dsl_error_defaults_to_the_start_of_the_spec():
    error = DslError("zero_turns", "x")
    assert (error.line, error.column) == (1, 1)



def test_actors_must_be_a_list_not_a_string():
    with pytest.raises(TypeError):
        validate(parse("B"), "Bob")
