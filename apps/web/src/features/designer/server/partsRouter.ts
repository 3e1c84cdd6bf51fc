import { createTRPCRouter, protectedProcedure } from "../../../server/api/trpc";
import { createPart, deletePart, duplicatePart, getPart, listParts, updatePart } from "./parts";
import {
  PartCreateInput,
  PartDeleteOutput,
  PartDuplicateInput,
  PartIdInput,
  PartListInput,
  PartListOutput,
  PartOut,
  PartUpdateInput,
} from "./partSchemas";

/**
 * Designer parts (actors, rewards, environments), one router for every kind: `kind` picks the
 * contracts schema a fragment is validated by. Invalid fragments fail with BAD_REQUEST and
 * `fieldIssues` paths like `spec.training.learningRate`; a taken name fails with CONFLICT on `spec.name`.
 */
export const partsRouter = createTRPCRouter({
  list: protectedProcedure
    .input(PartListInput)
    .output(PartListOutput)
    .query(async ({ ctx, input }) => ({ items: await listParts(ctx.db, input.kind) })),

  get: protectedProcedure
    .input(PartIdInput)
    .output(PartOut)
    .query(({ ctx, input }) => getPart(ctx.db, input.id)),

  create: protectedProcedure
    .input(PartCreateInput)
    .output(PartOut)
    .mutation(({ ctx, input }) => createPart(ctx.db, input)),

  update: protectedProcedure
    .input(PartUpdateInput)
    .output(PartOut)
    .mutation(({ ctx, input }) => updatePart(ctx.db, input)),

  duplicate: protectedProcedure
    .input(PartDuplicateInput)
    .output(PartOut)
    .mutation(({ ctx, input }) => duplicatePart(ctx.db, input)),

  delete: protectedProcedure
    .input(PartIdInput)
    .output(PartDeleteOutput)
    .mutation(({ ctx, input }) => deletePart(ctx.db, input.id)),
});
