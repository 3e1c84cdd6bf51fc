""""Did you mean" for unknown actors (mirrors suggest.ts): Levenshtein distance where swapping
two adjacent letters counts as one edit (optimal string alignment), ASCII case-insensitive."""

from __future__ import annotations

from typing import Optional, Sequence


def edit_distance(a: str, b: str) -> int:
    d = [[j if i == 0 else (i if j == 0 else 0) for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            best = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                best = min(best, d[i - 2][j - 2] + 1)
            d[i][j] = best
    return d[len(a)][len(b)]


def _ascii_lower(s: str) -> str:
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


def did_you_mean(name: str, known: Sequence[str]) -> Optional[str]:
    """The closest known name within max(1, len // 3) edits, ties to the earlier name; None if none is close."""
    limit = max(1, len(name) // 3)
    lower = _ascii_lower(name)
    best: Optional[str] = None
    best_distance = limit + 1
    for candidate in known:
        distance = edit_distance(lower, _ascii_lower(candidate))
        if distance < best_distance:
            best, best_distance = candidate, distance
    return best
