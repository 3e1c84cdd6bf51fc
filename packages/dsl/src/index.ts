/**
 * @troupe/dsl: the round-spec language, `Bob -> Alice -> (Bob/Alice)*5`.
 * The Python runtime (`troupe.schedule`) implements parse, validate and sample with the
 * same errors and the same PRNG; packages/dsl/conformance holds the cases both must pass.
 */
export * from "./ast";
export * from "./errors";
export { parse, type ParseResult } from "./parser";
export { validate, type ValidateOptions } from "./validate";
export { check, compile } from "./check";
export { turnBounds, type TurnBounds } from "./bounds";
export { normalizeActors } from "./actors";
export { SplitMix64, toSeed, type Seed } from "./prng";
export { sample, sampleMany, type SampleOptions } from "./sample";
export { stats, expectedTurns, type SpecStats, type ActorStats } from "./stats";
export { format } from "./format";
export { didYouMean, editDistance } from "./suggest";
export * from "./graph";
export * from "./monaco";
