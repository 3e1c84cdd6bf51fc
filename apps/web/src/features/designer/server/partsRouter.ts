import { createTRPCRouter, publicProcedure } from "../../../server/api/trpc";
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
  list: publicProcedure
    .input(PartListInput)
    .output(PartListOutput)
    .query(async ({ ctx, input }) => ({ items: await listParts(ctx.db, input.kind) })),

  get: publicProcedure
    .input(PartIdInput)
    .output(PartOut)
    .query(({ ctx, input }) => getPart(ctx.db, input.id)),

  create: publicProcedure
    .input(PartCreateInput)
    .output(PartOut)
    .mutation(({ ctx, input }) => createPart(ctx.db, input)),

  update: publicProcedure
    .input(PartUpdateInput)
    .output(PartOut)
    .mutation(({ ctx, input }) => updatePart(ctx.db, input)),

  duplicate: publicProcedure
    .input(PartDuplicateInput)
    .output(PartOut)
    .mutation(({ ctx, input }) => duplicatePart(ctx.db, input)),

  delete: publicProcedure
    .input(PartIdInput)
    .output(PartDeleteOutput)
    .mutation(({ ctx, input }) => deletePart(ctx.db, input.id)),
});
