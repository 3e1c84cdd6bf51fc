import { createTRPCRouter, protectedProcedure } from "../../../server/api/trpc";
import {
  DatasetDeleteOutput,
  DatasetIdInput,
  DatasetListOutput,
  DatasetPreviewInput,
  DatasetPreviewOutput,
  DatasetReferenceInput,
  DatasetSummary,
  DatasetUpdateInput,
  DatasetUploadInput,
} from "./datasetSchemas";
import {
  createDatasetReference,
  deleteDataset,
  getDataset,
  listDatasets,
  previewDataset,
  updateDataset,
  uploadDataset,
} from "./datasets";

/**
 * Datasets for the designer. Each summary carries `spec`, the RunSpec `datasets[]` entry that reads
 * it (`stored` for uploads: the runner materialises the file into the run folder).
 */
export const datasetRouter = createTRPCRouter({
  list: protectedProcedure
    .output(DatasetListOutput)
    .query(async ({ ctx }) => ({ items: await listDatasets(ctx.db) })),

  get: protectedProcedure
    .input(DatasetIdInput)
    .output(DatasetSummary)
    .query(({ ctx, input }) => getDataset(ctx.db, input.id)),

  preview: protectedProcedure
    .input(DatasetPreviewInput)
    .output(DatasetPreviewOutput)
    .query(({ ctx, input }) => previewDataset(ctx.db, input.id, input.limit)),

  upload: protectedProcedure
    .input(DatasetUploadInput)
    .output(DatasetSummary)
    .mutation(({ ctx, input }) => uploadDataset(ctx.db, input)),

  createReference: protectedProcedure
    .input(DatasetReferenceInput)
    .output(DatasetSummary)
    .mutation(({ ctx, input }) => createDatasetReference(ctx.db, input)),

  update: protectedProcedure
    .input(DatasetUpdateInput)
    .output(DatasetSummary)
    .mutation(({ ctx, input }) => updateDataset(ctx.db, input)),

  delete: protectedProcedure
    .input(DatasetIdInput)
    .output(DatasetDeleteOutput)
    .mutation(({ ctx, input }) => deleteDataset(ctx.db, input.id)),
});
