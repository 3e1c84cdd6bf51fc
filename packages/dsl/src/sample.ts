import type { Node, Schedule } from "./ast";
import { normalizeActors } from "./actors";
import { DslSpecError } from "./errors";
import { SplitMix64, toSeed, type Seed } from "./prng";
import { validate } from "./validate";

export interface SampleOptions {
  actors: readonly string[];
  maxTurns?: number;
}

/**
 * One schedule for `seed`. Draws happen in execution order, depth first, left to right:
 * a choice draws its option (weighted) before running it, a repeat draws its count
 * (`between(min, max)`) before its iterations, `*` draws `below(actors.length)`. Draws
 * with a single possible outcome consume nothing. Throws DslSpecError when the spec does
 * not validate against `actors` / `maxTurns`.
 */
export function sample(ast: Node, seed: Seed, options: SampleOptions): Schedule {
  return sampleMany(ast, seed, 1, options)[0]!;
}

/** `n` schedules; schedule i is `sample(ast, (seed + i) mod 2^64)`, so each can be reproduced alone. */
export function sampleMany(ast: Node, seed: Seed, n: number, options: SampleOptions): Schedule[] {
  const errors = validate(ast, options);
  if (errors.length > 0) throw new DslSpecError(errors);
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`n must be a whole number >= 0, got ${n}`);
  const actors = normalizeActors(options.actors);
  const first = toSeed(seed);
  const out: Schedule[] = [];
  for (let i = 0; i < n; i++) {
    const rng = new SplitMix64((first + BigInt(i)) & ((1n << 64n) - 1n));
    const turns: Schedule = [];
    emit(ast, rng, actors, turns);
    out.push(turns);
  }
  return out;
}

function emit(node: Node, rng: SplitMix64, actors: string[], turns: Schedule): void {
  switch (node.type) {
    case "actor":
      turns.push([node.name]);
      return;
    case "any":
      turns.push([actors[rng.below(actors.length)]!]);
      return;
    case "sequence":
      for (const item of node.items) emit(item, rng, actors, turns);
      return;
    case "choice": {
      const i = rng.weighted(node.options.map((o) => o.weight));
      emit(node.options[i]!.node, rng, actors, turns);
      return;
    }
    case "repeat": {
      const count = rng.between(node.min, node.max);
      for (let k = 0; k < count; k++) emit(node.body, rng, actors, turns);
      return;
    }
    case "parallel": {
      // validate guarantees each branch yields exactly one turn.
      const turn: string[] = [];
      for (const branch of node.branches) {
        const own: Schedule = [];
        emit(branch, rng, actors, own);
        turn.push(...own[0]!);
      }
      turns.push(turn);
      return;
    }
  }
}
