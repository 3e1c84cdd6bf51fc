/**
 * The one random source of the language, specified exactly so TypeScript and Python draw
 * the same schedules (README.md, "Randomness").
 *
 * splitmix64 (Steele, Lea, Flood 2014; Vigna's reference C), all arithmetic mod 2^64:
 *   state += 0x9E3779B97F4A7C15
 *   z = state
 *   z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
 *   z = (z ^ (z >> 27)) * 0x94D049BB133111EB
 *   return z ^ (z >> 31)
 * The seed is the initial state, a whole number in [0, 2^64).
 *
 * below(n), a uniform whole number in [0, n): n = 1 returns 0 and draws nothing; otherwise
 * draw x until x < 2^64 - (2^64 mod n) (rejection, so no value is favoured) and return x mod n.
 */
const MASK = (1n << 64n) - 1n;
const TWO_64 = 1n << 64n;
const GAMMA = 0x9e3779b97f4a7c15n;
const MUL1 = 0xbf58476d1ce4e5b9n;
const MUL2 = 0x94d049bb133111ebn;

export type Seed = number | bigint;

/** Checks a seed and returns it as a BigInt in [0, 2^64). */
export function toSeed(seed: Seed): bigint {
  if (typeof seed === "number" && !Number.isSafeInteger(seed)) throw new RangeError(`seed must be a whole number, got ${seed}`);
  const value = BigInt(seed);
  if (value < 0n || value > MASK) throw new RangeError(`seed must be in [0, 2^64), got ${value}`);
  return value;
}

export class SplitMix64 {
  private state: bigint;

  constructor(seed: Seed) {
    this.state = toSeed(seed);
  }

  nextU64(): bigint {
    this.state = (this.state + GAMMA) & MASK;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * MUL1) & MASK;
    z = ((z ^ (z >> 27n)) * MUL2) & MASK;
    return z ^ (z >> 31n);
  }

  /** Uniform whole number in [0, n). */
  below(n: number): number {
    if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`below(n) needs a whole n >= 1, got ${n}`);
    if (n === 1) return 0;
    const bound = BigInt(n);
    const limit = TWO_64 - (TWO_64 % bound);
    for (;;) {
      const x = this.nextU64();
      if (x < limit) return Number(x % bound);
    }
  }

  /** Uniform whole number in [lo, hi], inclusive: lo + below(hi - lo + 1). */
  between(lo: number, hi: number): number {
    return lo + this.below(hi - lo + 1);
  }

  /** Index i with probability weights[i] / sum: r = below(sum), then the first i whose running sum exceeds r. */
  weighted(weights: readonly number[]): number {
    const total = weights.reduce((a, b) => a + b, 0);
    const r = this.below(total);
    let running = 0;
    for (let i = 0; i < weights.length; i++) {
      running += weights[i]!;
      if (r < running) return i;
    }
    throw new Error("unreachable: weights must be positive whole numbers");
  }
}
