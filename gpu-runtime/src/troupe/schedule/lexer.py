"""Tokens on demand, so the first error in source order is the one reported (mirrors lexer.ts)."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import DslError
from .nodes import Position, Span

# Whitespace is this fixed set in both implementations (Unicode classes differ between JS and Python).
WHITESPACE = frozenset(" \t\r\n\f\v\u00a0\ufeff")
PUNCTUATION = {"/": "slash", "&": "amp", "*": "star", ":": "colon", "(": "lparen", ")": "rparen"}
HINTS = {
    "|": 'did you mean "/" (choice)?',
    ",": 'did you mean "->" (sequence)?',
    ";": 'did you mean "->" (sequence)?',
    ">": 'did you mean "->"?',
    "=": 'did you mean "->"?',
    "-": 'did you mean "->"?',
    "\u2192": 'did you mean "->"?',
    "\u21d2": 'did you mean "->"?',
    "+": 'did you mean "&" (parallel)?',
    "\u00d7": 'did you mean "*" (repeat)?',
    "[": 'use "(" and ")" to group',
    "]": 'use "(" and ")" to group',
    "{": 'use "(" and ")" to group',
    "}": 'use "(" and ")" to group',
}
_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NAME_PART = _NAME_START | frozenset("0123456789.-")
_DIGITS = frozenset("0123456789")
# Sets, not strings: `"" in set` is False, which the end-of-input checks rely on.


@dataclass(frozen=True)
class Token:
    kind: str  # name number arrow slash amp star colon dotdot lparen rparen eof
    text: str
    span: Span


class SyntaxFailure(Exception):
    def __init__(self, error: DslError):
        super().__init__(error.message)
        self.error = error


def describe_char(c: str) -> str:
    cp = ord(c)
    if 0x21 <= cp <= 0x7E:
        return f'"{c}"'
    return f'"{c}" (U+{cp:04X})'


class Lexer:
    def __init__(self, source: str):
        self.chars = source
        self.i = 0
        self.line = 1
        self.column = 1
        self.last_end = Position(0, 1, 1)

    def _at(self, k: int) -> str:
        j = self.i + k
        return self.chars[j] if j < len(self.chars) else ""

    def _position(self) -> Position:
        return Position(self.i, self.line, self.column)

    def _advance(self) -> None:
        c = self.chars[self.i]
        self.i += 1
        if c == "\n":
            self.line += 1
            self.column = 1
        else:
            self.column += 1

    def _skip_trivia(self) -> None:
        while True:
            c = self._at(0)
            if c in WHITESPACE:
                self._advance()
            elif c == "#":
                while self._at(0) not in ("", "\n"):
                    self._advance()
            else:
                return

    def next(self) -> Token:
        self._skip_trivia()
        start = self._position()
        c = self._at(0)
        if c == "":
            return Token("eof", "", Span(self.last_end, self.last_end))
        if c == "-" and self._at(1) == ">":
            self._advance()
            self._advance()
            kind = "arrow"
        elif c == "." and self._at(1) == ".":
            self._advance()
            self._advance()
            kind = "dotdot"
        elif c in _DIGITS or (c == "-" and self._at(1) in _DIGITS):
            self._advance()
            while self._at(0) in _DIGITS:
                self._advance()
            # A fraction only when a digit follows the dot: `2..5` is a range, `2.5` a (rejected) decimal.
            if self._at(0) == "." and self._at(1) in _DIGITS:
                self._advance()
                while self._at(0) in _DIGITS:
                    self._advance()
            kind = "number"
        elif c in _NAME_START:
            self._advance()
            # `-` belongs to a name unless it starts an arrow: `Bob->Alice` is two names.
            while self._at(0) in _NAME_PART and not (self._at(0) == "-" and self._at(1) == ">"):
                self._advance()
            kind = "name"
        elif c in PUNCTUATION:
            self._advance()
            kind = PUNCTUATION[c]
        else:
            self._advance()
            hint = HINTS.get(c)
            message = f"unexpected character {describe_char(c)}" + (f"; {hint}" if hint else "")
            raise SyntaxFailure(DslError("unexpected_character", message, Span(start, self._position())))
        end = self._position()
        self.last_end = end
        return Token(kind, self.chars[start.offset : end.offset], Span(start, end))
