"""splitmix64, exactly as packages/dsl/src/prng.ts specifies it (see the README's "Randomness").

    state += 0x9E3779B97F4A7C15                       (all mod 2^64)
    z = state
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB
    return z ^ (z >> 31)

below(n): n == 1 returns 0 and draws nothing; otherwise draw x until x < 2^64 - (2^64 mod n)
and return x mod n. between(lo, hi) = lo + below(hi - lo + 1). weighted(ws): r = below(sum(ws)),
then the first i whose running sum exceeds r.
"""

from __future__ import annotations

from typing import Sequence

MASK = (1 << 64) - 1
TWO_64 = 1 << 64
GAMMA = 0x9E3779B97F4A7C15
MUL1 = 0xBF58476D1CE4E5B9
MUL2 = 0x94D049BB133111EB


def to_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be a whole number, got {seed!r}")
    if seed < 0 or seed > MASK:
        raise ValueError(f"seed must be in [0, 2^64), got {seed}")
    return seed


class SplitMix64:
    def __init__(self, seed: int):
        self.state = to_seed(seed)

    def next_u64(self) -> int:
        self.state = (self.state + GAMMA) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * MUL1) & MASK
        z = ((z ^ (z >> 27)) * MUL2) & MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Uniform whole number in [0, n)."""
        if n < 1:
            raise ValueError(f"below(n) needs n >= 1, got {n}")
        if n == 1:
            return 0
        limit = TWO_64 - (TWO_64 % n)
        while True:
            x = self.next_u64()
            if x < limit:
                return x % n

    def between(self, lo: int, hi: int) -> int:
        """Uniform whole number in [lo, hi], inclusive."""
        return lo + self.below(hi - lo + 1)

    def weighted(self, weights: Sequence[int]) -> int:
        """Index i with probability weights[i] / sum(weights)."""
        r = self.below(sum(weights))
        running = 0
        for i, w in enumerate(weights):
            running += w
            if r < running:
                return i
        raise AssertionError("unreachable: weights must be positive whole numbers")
