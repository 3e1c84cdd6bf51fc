"""Recursive-descent parser, step for step the same as packages/dsl/src/parser.ts.

    spec     = sequence EOF
    sequence = choice { "->" choice }
    choice   = weighted { "/" weighted }
    weighted = parallel [ ":" WHOLE ]
    parallel = postfix { "&" postfix }
    postfix  = primary { "*" count }
    count    = WHOLE | "(" WHOLE ".." WHOLE ")"
    primary  = NAME | "*" | "(" sequence ")"
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, NoReturn, Optional, Tuple

from .errors import DslError, SpecError
from .lexer import Lexer, SyntaxFailure, Token
from .nodes import MAX_COUNT, MAX_DEPTH, MAX_WEIGHT, Actor, AnyActor, Choice, Node, Option, Parallel, Position, Repeat, Sequence, Span

_TOKEN_WORDS = {
    "arrow": '"->"',
    "slash": '"/"',
    "amp": '"&"',
    "star": '"*"',
    "colon": '":"',
    "dotdot": '".."',
    "lparen": '"("',
    "rparen": '")"',
    "eof": "the end of the spec",
}
_WHOLE = re.compile(r"[0-9]+\Z")


def _describe(token: Token) -> str:
    if token.kind == "name":
        return f'actor "{token.text}"'
    if token.kind == "number":
        return f'number "{token.text}"'
    return _TOKEN_WORDS.get(token.kind, token.kind)


def _fail(kind: str, message: str, span: Span) -> NoReturn:
    raise SyntaxFailure(DslError(kind, message, span))


@dataclass
class _Parsed:
    """A parsed piece with its full extent, parentheses included (node spans exclude them)."""

    node: Node
    start: Position
    end: Position
    depth: int  # height of the tree below and including `node`


@dataclass
class _Weighted:
    parsed: _Parsed
    weight: int
    colon: Optional[Token]
    weight_text: str


class _Parser:
    def __init__(self, source: str):
        self.lexer = Lexer(source)
        self.buffer: List[Token] = []
        # Open parentheses around the current position; bounded so deep input cannot exhaust the recursion limit.
        self.open_groups = 0

    def peek(self, k: int = 0) -> Token:
        while len(self.buffer) <= k:
            self.buffer.append(self.lexer.next())
        return self.buffer[k]

    def take(self) -> Token:
        token = self.peek()
        self.buffer.pop(0)
        return token

    def spec(self) -> Node:
        first = self.peek()
        if first.kind == "eof":
            _fail("empty_spec", "the spec is empty; write at least one actor, like Bob -> Alice", first.span)
        parsed = self.sequence("at the start of the spec")
        nxt = self.peek()
        if nxt.kind == "rparen":
            _fail("unbalanced_paren", 'this ")" has no matching "("', nxt.span)
        if nxt.kind != "eof":
            self.unexpected_after(nxt, "the end of the spec")
        return parsed.node

    def unexpected_after(self, token: Token, closer: str) -> NoReturn:
        hint = ""
        if token.kind in ("name", "lparen"):
            hint = '; did you forget "->"?'
        if token.kind == "number":
            hint = f'; did you mean "*{token.text}"?'
        _fail("unexpected_token", f'expected "->", "/", "&", "*" or {closer}, found {_describe(token)}{hint}', token.span)

    def sequence(self, context: str) -> _Parsed:
        items = [self.choice(context)]
        while self.peek().kind == "arrow":
            self.take()
            items.append(self.choice('after "->"'))
        if len(items) == 1:
            return items[0]
        return self.group(lambda span: Sequence(tuple(p.node for p in items), span), items)

    def choice(self, context: str) -> _Parsed:
        first = self.weighted(context)
        if self.peek().kind != "slash":
            if first.colon is not None:
                _fail(
                    "weight_outside_choice",
                    f'a weight (":{first.weight_text}") only applies to an alternative of a choice, like (A:3 / B:1)',
                    first.colon.span,
                )
            return first.parsed
        options = [first]
        while self.peek().kind == "slash":
            self.take()
            options.append(self.weighted('after "/"'))
        return self.group(
            lambda span: Choice(tuple(Option(o.parsed.node, o.weight) for o in options), span),
            [o.parsed for o in options],
        )

    def weighted(self, context: str) -> _Weighted:
        parsed = self.parallel(context)
        if self.peek().kind != "colon":
            return _Weighted(parsed, 1, None, "")
        colon = self.take()
        token = self.peek()
        if token.kind != "number":
            _fail("bad_weight", f'expected a weight after ":", like (A:3 / B:1), found {_describe(token)}', token.span)
        self.take()
        if not _WHOLE.match(token.text) or int(token.text) < 1 or int(token.text) > MAX_WEIGHT:
            _fail("bad_weight", f'a weight must be a whole number from 1 to {MAX_WEIGHT}, found "{token.text}"', token.span)
        after = self.peek()
        if after.kind in ("star", "amp"):
            _fail(
                "unexpected_token",
                f"{_describe(after)} cannot follow a weight; write the weight last, like (A*2:3 / B)",
                after.span,
            )
        return _Weighted(parsed, int(token.text), colon, token.text)

    def parallel(self, context: str) -> _Parsed:
        branches = [self.postfix(context)]
        while self.peek().kind == "amp":
            self.take()
            branches.append(self.postfix('after "&"'))
        if len(branches) == 1:
            return branches[0]
        return self.group(lambda span: Parallel(tuple(p.node for p in branches), span), branches)

    def postfix(self, context: str) -> _Parsed:
        parsed = self.primary(context)
        while self.peek().kind == "star":
            self.take()
            lo, hi, end = self.count()
            node = Repeat(parsed.node, lo, hi, Span(parsed.start, end))
            parsed = self.check_depth(_Parsed(node, parsed.start, end, parsed.depth + 1))
        return parsed

    def count(self) -> Tuple[int, int, Position]:
        token = self.peek()
        if token.kind == "number":
            self.take()
            n = self.whole(token, "bad_count", "a repeat count", 1)
            return n, n, token.span.end
        if token.kind != "lparen":
            _fail("bad_count", f'expected a count after "*", like *3 or *(2..5), found {_describe(token)}', token.span)
        open_ = self.take()
        lo = self.range_part("number")
        self.range_part("dotdot")
        hi = self.range_part("number")
        close = self.range_part("rparen")
        low = self.whole(lo, "bad_range", "a range bound", 0)
        high = self.whole(hi, "bad_range", "a range bound", 0)
        span = Span(open_.span.start, close.span.end)
        if low > high:
            _fail(
                "bad_range",
                f"the range *({lo.text}..{hi.text}) is empty: its lower bound is greater than its upper bound",
                span,
            )
        if high == 0:
            _fail("bad_range", f"the range *({lo.text}..{hi.text}) always repeats 0 times", span)
        return low, high, close.span.end

    def range_part(self, kind: str) -> Token:
        token = self.peek()
        if token.kind != kind:
            _fail("bad_range", f"expected a range like *(2..5), found {_describe(token)}", token.span)
        return self.take()

    def whole(self, token: Token, kind: str, what: str, least: int) -> int:
        text = token.text
        if not _WHOLE.match(text):
            problem = f"at least {least}" if text.startswith("-") else "a whole number"
            _fail(kind, f'{what} must be {problem}, found "{text}"', token.span)
        value = int(text)
        if value < least:
            hint = "; use *(0..n) for an optional part" if kind == "bad_count" else ""
            _fail(kind, f'{what} must be at least {least}, found "{text}"{hint}', token.span)
        if value > MAX_COUNT:
            _fail(kind, f'{what} must be at most {MAX_COUNT}, found "{text}"', token.span)
        return value

    def primary(self, context: str) -> _Parsed:
        token = self.peek()
        if token.kind == "name":
            self.take()
            return _Parsed(Actor(token.text, token.span), token.span.start, token.span.end, 1)
        if token.kind == "star":
            after = self.peek(1)
            if after.kind in ("number", "lparen"):
                _fail(
                    "repeat_without_subject",
                    '"*" here repeats nothing; put the actor or group before it, like Bob*3 or (Bob -> Alice)*3',
                    token.span,
                )
            self.take()
            return _Parsed(AnyActor(token.span), token.span.start, token.span.end, 1)
        if token.kind == "lparen":
            open_ = self.take()
            if self.open_groups >= MAX_DEPTH:
                _fail("too_deeply_nested", f"too deeply nested: at most {MAX_DEPTH} levels", open_.span)
            if self.peek().kind == "rparen":
                close = self.take()
                _fail("empty_group", 'empty group "()"; put at least one actor inside', Span(open_.span.start, close.span.end))
            self.open_groups += 1
            inner = self.sequence('after "("')
            self.open_groups -= 1
            nxt = self.peek()
            if nxt.kind == "eof":
                _fail("unbalanced_paren", 'this "(" is never closed', open_.span)
            if nxt.kind != "rparen":
                self.unexpected_after(nxt, '")"')
            close = self.take()
            return _Parsed(inner.node, open_.span.start, close.span.end, inner.depth)
        kind = "unexpected_end" if token.kind == "eof" else "unexpected_token"
        _fail(kind, f'expected an actor, "*" or "(" {context}, found {_describe(token)}', token.span)

    def group(self, build, parts: List[_Parsed]) -> _Parsed:
        """An n-ary node whose span runs from its first part to its last."""
        start, end = parts[0].start, parts[-1].end
        return self.check_depth(_Parsed(build(Span(start, end)), start, end, 1 + max(p.depth for p in parts)))

    @staticmethod
    def check_depth(parsed: _Parsed) -> _Parsed:
        if parsed.depth > MAX_DEPTH:
            _fail("too_deeply_nested", f"too deeply nested: at most {MAX_DEPTH} levels", Span(parsed.start, parsed.end))
        return parsed


def try_parse(source: str) -> Tuple[Optional[Node], List[DslError]]:
    """(tree, []) or (None, [the first syntax error]); never raises for bad text."""
    try:
        return _Parser(source).spec(), []
    except SyntaxFailure as failure:
        return None, [failure.error]


def parse(source: str) -> Node:
    """The tree of a round spec; raises SpecError (with typed errors) for bad text."""
    node, errors = try_parse(source)
    if node is None:
        raise SpecError(errors)
    return node
