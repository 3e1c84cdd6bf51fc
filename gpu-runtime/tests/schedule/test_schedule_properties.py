"""Property tests (hypothesis): round trips, bounds and frequencies on random trees.

Frequency checks: a count of n draws with probability p is binomial with standard deviation
sqrt(n p (1 - p)); we accept |count - n p| <= 5 sd, which a correct sampler fails with
probability about 5.7e-7 per check.
"""

from __future__ import annotations

import math
from collections import Counter

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from troupe.schedule import (
    Actor,
    AnyActor,
    Choice,
    Option,
    Parallel,
    Repeat,
    Sequence,
    SpecError,
    format_spec,
    parse,
    sample_many,
    stats,
    try_parse,
    turn_bounds,
    validate,
)
from troupe.schedule.nodes import children

NAMES = st.one_of(
    st.sampled_from(["A", "B", "Bob", "alice_2", "gpt-4.1", "x.y-z", "_"]),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,6}", fullmatch=True),
)
LEAVES = st.one_of(NAMES.map(Actor), NAMES.map(Actor), NAMES.map(Actor), st.just(AnyActor()))
BOUNDS = st.tuples(st.integers(0, 4), st.integers(0, 3)).map(lambda t: (t[0], max(1, t[0] + t[1])))
WEIGHTS = st.one_of(st.just(1), st.integers(1, 9), st.just(1_000_000))


def _extend(inner, weights=WEIGHTS, branch=None):
    branch = inner if branch is None else branch
    return st.one_of(
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: Sequence(tuple(xs))),
        st.lists(st.tuples(inner, weights), min_size=2, max_size=3).map(lambda xs: Choice(tuple(Option(n, w) for n, w in xs))),
        st.lists(branch, min_size=2, max_size=3).map(lambda xs: Parallel(tuple(xs))),
        st.tuples(inner, BOUNDS).map(lambda t: Repeat(t[0], t[1][0], t[1][1])),
    )


ANY_TREE = st.recursive(LEAVES, _extend, max_leaves=12)

# Exactly one turn: what a parallel branch must be.
ONE_TURN = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(st.tuples(inner, st.integers(1, 5)), min_size=2, max_size=3).map(lambda xs: Choice(tuple(Option(n, w) for n, w in xs))),
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: Parallel(tuple(xs))),
        inner.map(lambda n: Repeat(n, 1, 1)),
    ),
    max_leaves=4,
)
SAMPLEABLE = st.recursive(LEAVES, lambda inner: _extend(inner, st.integers(1, 5), ONE_TURN), max_leaves=10)


def names_in(node, out=None):
    out = [] if out is None else out
    if isinstance(node, Actor) and node.name not in out:
        out.append(node.name)
    for kid in children(node):
        names_in(kid, out)
    return out


def within_five_sigma(count, n, p):
    return abs(count - n * p) <= 5 * math.sqrt(n * p * (1 - p))


@settings(max_examples=400, deadline=None)
@given(ANY_TREE)
def test_parse_format_round_trip(node):
    text = format_spec(node)
    assert parse(text) == node
    assert format_spec(parse(text)) == text


ALPHABET = st.sampled_from(list("AB_x9-> /&*:()..#\n\t3|,\u2192\U0001F3AD") + ["->", "..", "Bob", "*(2..3)"])


@settings(max_examples=1500, deadline=None)
@given(st.lists(ALPHABET, max_size=30).map("".join))
def test_arbitrary_text_parses_or_gives_one_positioned_error(text):
    node, errors = try_parse(text)
    if node is None:
        assert len(errors) == 1 and errors[0].span.start.offset <= len(text)
        return

    def walk(n):
        if isinstance(n, Actor):
            # Never silently a name: every name is exactly the text at its span.
            assert text[n.span.start.offset : n.span.end.offset] == n.name
        for kid in children(n):
            walk(kid)

    walk(node)


def _setting(node):
    return names_in(node) + ["Extra"]


@settings(max_examples=300, deadline=None)
@given(SAMPLEABLE, st.integers(0, 2**64 - 1))
def test_samples_lie_within_stats_bounds(node, seed):
    actors = _setting(node)
    lo, hi = turn_bounds(node)
    assume(lo >= 1 and hi <= 5000)
    assert validate(node, actors, max_turns=100_000) == []
    s = stats(node, actors)
    assert (s.min_turns, s.max_turns) == (lo, hi)
    for schedule in sample_many(node, seed, 5, actors, max_turns=100_000):
        assert lo <= len(schedule) <= hi
        assert all(len(turn) <= s.max_actors_per_turn for turn in schedule)
        counts = Counter(name for turn in schedule for name in turn)
        assert set(counts) <= set(s.actors)
        for name, a in s.actors.items():
            assert a.min_turns <= counts.get(name, 0) <= a.max_turns


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 10), min_size=2, max_size=5), st.integers(0, 2**32))
def test_choice_frequencies_match_weights(weights, seed):
    actors = [f"O{i}" for i in range(len(weights))]
    node = parse("(" + " / ".join(f"O{i}:{w}" for i, w in enumerate(weights)) + ")")
    n = 4000
    counts = Counter(s[0][0] for s in sample_many(node, seed, n, actors))
    total = sum(weights)
    for i, w in enumerate(weights):
        assert within_five_sigma(counts[f"O{i}"], n, w / total), (i, counts, weights)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 3), st.integers(1, 4), st.integers(2, 5), st.integers(0, 2**32))
def test_range_counts_and_any_actor_are_uniform(lo, width, n_actors, seed):
    hi = lo + width
    n = 3000
    lengths = Counter(len(s) - 1 for s in sample_many(parse(f"Start -> X*({lo}..{hi})"), seed, n, ["Start", "X"]))
    for k in range(lo, hi + 1):
        assert within_five_sigma(lengths[k], n, 1 / (width + 1)), (k, lengths)
    actors = [f"P{i}" for i in range(n_actors)]
    picks = Counter(s[0][0] for s in sample_many(parse("*"), seed, n, actors))
    for a in actors:
        assert within_five_sigma(picks[a], n, 1 / n_actors), (a, picks)


def test_the_frequency_check_can_fail():
    n = 4000
    a = sum(1 for s in sample_many(parse("(A:3 / B:1)"), 1, n, ["A", "B"]) if s[0][0] == "A")
    assert within_five_sigma(a, n, 0.75)
    assert not within_five_sigma(a, n, 0.5)


def test_invalid_trees_are_refused_by_sample():
    try:
        sample_many(parse("A -> B"), 0, 1, ["A"])
    except SpecError as error:
        assert [e.kind for e in error.errors] == ["unknown_actor"]
    else:
        raise AssertionError("sample accepted an unknown actor")
