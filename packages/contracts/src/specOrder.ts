import type { z } from "zod";
import { ActorSpec, DatasetSpec, EnvironmentSpec, RewardSpec, RunSpec } from "./runSpec";

/**
 * Puts a spec's object keys back in the order its zod schema declares them.
 *
 * Specs are stored in Postgres `jsonb`, which keeps no key order (it sorts keys, shorter first), so
 * `{ "specVersion", "name", ... }` comes back as `{ "name", "seed", "tags", ... }`. Every place that
 * shows or returns a stored spec reads it through this (the database client does it on read), so a
 * person sees the order the schema, the composer and the docs use.
 *
 * Rules, recursive and deterministic:
 * - an object's known keys in the schema's order, then unknown keys (a draft may have them) in the
 *   order they came;
 * - a discriminated union follows the option its discriminator names; another union of objects the
 *   option that knows the most of the value's keys (the first such);
 * - arrays and tuples element by element; a record's entries keep their order (its keys are data,
 *   not fields: nothing declares an order for them), their values are ordered;
 * - anything the schema does not describe (or a value of the wrong shape) is returned as it is.
 * Values are never changed, added or dropped: only key order. Works on invalid drafts too.
 */
export function orderLikeSchema(schema: z.ZodType, value: unknown): unknown {
  return planOf(schema)(value);
}

/** A function that orders one value; built once per schema (specs are read in bulk: runs lists). */
type Plan = (value: unknown) => unknown;
const plans = new WeakMap<z.ZodType, Plan>();
const asIs: Plan = (value) => value;

function planOf(schema: z.ZodType): Plan {
  const known = plans.get(schema);
  if (known) return known;
  // Set a forwarding plan first, so a recursive (lazy) schema finds itself instead of looping.
  let built: Plan = asIs;
  plans.set(schema, (value) => built(value));
  built = buildPlan(schema);
  plans.set(schema, built);
  return built;
}

function buildPlan(schema: z.ZodType): Plan {
  const def = defOf(unwrap(schema));
  switch (def.type) {
    case "object": {
      const shape = def.shape as Record<string, z.ZodType>;
      const fields = Object.keys(shape).map((key) => [key, planOf(shape[key]!)] as const);
      const catchall = def.catchall as z.ZodType | undefined;
      const extra = catchall !== undefined && defOf(catchall).type !== "never" ? planOf(catchall) : asIs;
      return (value) => {
        if (!isPlainObject(value)) return value;
        const ordered: Record<string, unknown> = {};
        for (const [key, plan] of fields) if (Object.hasOwn(value, key)) ordered[key] = plan(value[key]);
        for (const key of Object.keys(value)) if (!Object.hasOwn(ordered, key)) ordered[key] = extra(value[key]);
        return ordered;
      };
    }
    case "array": {
      const element = planOf(def.element as z.ZodType);
      return (value) => (Array.isArray(value) ? value.map(element) : value);
    }
    case "tuple": {
      const items = (def.items as z.ZodType[]).map(planOf);
      const rest = def.rest ? planOf(def.rest as z.ZodType) : asIs;
      return (value) => (Array.isArray(value) ? value.map((item, i) => (items[i] ?? rest)(item)) : value);
    }
    case "record": {
      const entry = planOf(def.valueType as z.ZodType);
      return (value) => {
        if (!isPlainObject(value)) return value;
        const ordered: Record<string, unknown> = {};
        for (const key of Object.keys(value)) ordered[key] = entry(value[key]);
        return ordered;
      };
    }
    case "union": {
      const discriminator = def.discriminator as string | undefined;
      const options = (def.options as z.ZodType[])
        .map((option) => ({ option, def: defOf(unwrap(option)) }))
        .filter((o) => o.def.type === "object")
        .map(({ option, def: optionDef }) => {
          const shape = optionDef.shape as Record<string, z.ZodType>;
          return { plan: planOf(option), shape, tags: discriminator ? literalValues(shape[discriminator]) : [] };
        });
      return (value) => {
        const option = pickOption(options, discriminator, value);
        return option ? option.plan(value) : value;
      };
    }
    default:
      return asIs;
  }
}

/** A stored RunSpec (or an experiment's draft of one) in the schema's key order. */
export const orderRunSpec = (spec: unknown): unknown => orderLikeSchema(RunSpec, spec);

/** The schema of each designer part kind (DesignPart.kind), for ordering a stored part. */
export const PART_SCHEMAS = { actor: ActorSpec, dataset: DatasetSpec, reward: RewardSpec, environment: EnvironmentSpec } as const;

/** A stored designer part (ActorSpec, RewardSpec, ...) in the schema's key order; unknown kinds as they are. */
export function orderPartSpec(kind: string, spec: unknown): unknown {
  const schema = (PART_SCHEMAS as Record<string, z.ZodType | undefined>)[kind];
  return schema ? orderLikeSchema(schema, spec) : spec;
}

interface AnyDef {
  type: string;
  [key: string]: unknown;
}

function defOf(schema: z.ZodType): AnyDef {
  return (schema as unknown as { _zod: { def: AnyDef } })._zod.def;
}

/** Wrappers that do not change a value's shape: default, optional, nullable, readonly, lazy, pipe (its input side). */
function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (let depth = 0; depth < 64; depth++) {
    const def = defOf(current);
    if ("innerType" in def && def.innerType) current = def.innerType as z.ZodType;
    else if (def.type === "lazy") current = (def.getter as () => z.ZodType)();
    else if (def.type === "pipe") current = def.in as z.ZodType;
    else return current;
  }
  return current;
}

interface UnionOption {
  plan: Plan;
  shape: Record<string, z.ZodType>;
  /** The discriminator's values that select this option. */
  tags: unknown[];
}

function pickOption(options: readonly UnionOption[], discriminator: string | undefined, value: unknown): UnionOption | undefined {
  if (!isPlainObject(value)) return undefined;
  if (discriminator !== undefined && Object.hasOwn(value, discriminator)) {
    const named = options.find((o) => o.tags.includes(value[discriminator]));
    if (named) return named;
  }
  let best: { option: UnionOption; known: number } | undefined;
  for (const option of options) {
    const known = Object.keys(value).filter((k) => Object.hasOwn(option.shape, k)).length;
    if (known > 0 && (!best || known > best.known)) best = { option, known };
  }
  return best?.option;
}

function literalValues(schema: z.ZodType | undefined): unknown[] {
  if (!schema) return [];
  const def = defOf(unwrap(schema));
  if (def.type === "literal") return def.values as unknown[];
  if (def.type === "enum") return Object.values(def.entries as Record<string, unknown>);
  return [];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
