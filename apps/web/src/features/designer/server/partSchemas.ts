import { ActorSpec, EnvironmentSpec, RewardSpec } from "@troupe/contracts";
import { z } from "zod";

/**
 * Reusable RunSpec fragments ("parts"). One router serves every kind; the contracts schema of the
 * kind is the single source of what a valid part is, so the designer can never save a fragment a
 * RunSpec would refuse.
 */
export const PartKind = z.enum(["actor", "reward", "environment"]);
export type PartKind = z.infer<typeof PartKind>;

/** The contracts schema each kind is validated by. */
export const PART_SPEC_SCHEMAS = {
  actor: ActorSpec,
  reward: RewardSpec,
  environment: EnvironmentSpec,
} as const;

/** A fragment as the user wrote it (`z.input` of its kind): checked by `PART_SPEC_SCHEMAS[kind]` in the handler. */
export const PartSpecInput = z.record(z.string(), z.unknown());

const DescriptionText = z.string().max(2000, "must be at most 2000 characters");
export const PartDescription = DescriptionText.default("");

export const PartListInput = z.object({ kind: PartKind }).strict();
export const PartIdInput = z.object({ id: z.string().min(1) }).strict();
export const PartCreateInput = z
  .object({ kind: PartKind, spec: PartSpecInput, description: PartDescription })
  .strict();
export const PartUpdateInput = z
  .object({
    id: z.string().min(1),
    spec: PartSpecInput,
    /** Unchanged when absent. */
    description: DescriptionText.optional(),
  })
  .strict();
export const PartDuplicateInput = z
  .object({ id: z.string().min(1), name: z.string().min(1).max(64).optional() })
  .strict();

export const PartOut = z.object({
  id: z.string(),
  kind: PartKind,
  /** Always equal to `spec.name`. */
  name: z.string(),
  description: z.string(),
  /** As written by the user (defaults may be omitted). */
  spec: z.record(z.string(), z.unknown()),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type PartOut = z.infer<typeof PartOut>;
export const PartListOutput = z.object({ items: z.array(PartOut) });
export const PartDeleteOutput = z.object({ id: z.string(), deleted: z.literal(true) });
