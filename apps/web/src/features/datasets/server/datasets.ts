import type { DatasetSpec } from "@troupe/contracts";
import { Prisma } from "@troupe/db";
import { TRPCError } from "@trpc/server";
import type { z } from "zod";
import { badRequest } from "../../../server/api/trpc";
import type { Db } from "../../../server/db";
import type { DatasetReferenceInput, DatasetSummary, DatasetUpdateInput, DatasetUploadInput } from "./datasetSchemas";
import { DatasetParseError, parseDataset, type DatasetFormat } from "./parseDataset";
import { storeUploadedDataset } from "./store";

type DatasetRunSpecEntry = z.output<typeof DatasetSpec>;

/** The designer's datasets: uploads (stored whole), Hugging Face and runner-host references. */

const SUMMARY_SELECT = {
  id: true,
  name: true,
  description: true,
  kind: true,
  format: true,
  location: true,
  byteSize: true,
  rowCount: true,
  columns: true,
  columnTypes: true,
  evalFraction: true,
  sha256: true,
  createdAt: true,
  updatedAt: true,
} as const;

type SummaryRow = Prisma.DatasetGetPayload<{ select: typeof SUMMARY_SELECT }>;

/** The RunSpec `datasets[]` entry for a stored row: what a run of it reads. */
export function datasetSpecOf(row: Pick<SummaryRow, "id" | "name" | "kind" | "format" | "location" | "evalFraction">): DatasetRunSpecEntry {
  const location = (row.location ?? {}) as Record<string, string | undefined>;
  const base = { name: row.name, evalFraction: row.evalFraction };
  if (row.kind === "huggingface") {
    return {
      ...base,
      source: { kind: "huggingface", id: location.id ?? "", split: location.split ?? "train", ...(location.config ? { config: location.config } : {}) },
    };
  }
  if (row.kind === "local") {
    return { ...base, source: { kind: "file", path: location.path ?? "", format: row.format as DatasetFormat } };
  }
  return { ...base, source: { kind: "stored", datasetId: row.id, format: row.format as DatasetFormat } };
}

function toSummary(row: SummaryRow): DatasetSummary {
  return {
    ...row,
    kind: row.kind as DatasetSummary["kind"],
    location: (row.location as Record<string, unknown> | null) ?? null,
    columns: row.columns as string[],
    columnTypes: row.columnTypes as Record<string, string>,
    spec: datasetSpecOf(row),
  };
}

function notFound(id: string): TRPCError {
  return new TRPCError({ code: "NOT_FOUND", message: `dataset ${id} not found` });
}

/** Dataset names are RunSpec identifiers; two datasets of one name could not sit in one spec. */
async function assertNameFree(db: Db, name: string, exceptId?: string): Promise<void> {
  const clash = await db.dataset.findFirst({ where: { name, ...(exceptId ? { id: { not: exceptId } } : {}) }, select: { id: true } });
  if (clash) throw badRequest([{ path: "name", message: `a dataset named "${name}" already exists` }]);
}

export async function listDatasets(db: Db): Promise<DatasetSummary[]> {
  const rows = await db.dataset.findMany({ select: SUMMARY_SELECT, orderBy: [{ name: "asc" }, { createdAt: "desc" }] });
  return rows.map(toSummary);
}

export async function getDataset(db: Db, id: string): Promise<DatasetSummary> {
  const row = await db.dataset.findUnique({ where: { id }, select: SUMMARY_SELECT });
  if (!row) throw notFound(id);
  return toSummary(row);
}

function decodeBase64(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw badRequest([{ path: "contentBase64", message: "is not base64" }]);
  return new Uint8Array(Buffer.from(text, "base64"));
}

/** Parses the whole file first; a malformed file is refused (path `file`, with its line or row) and nothing is stored. */
export async function uploadDataset(db: Db, input: z.output<typeof DatasetUploadInput>): Promise<DatasetSummary> {
  await assertNameFree(db, input.name);
  const bytes = decodeBase64(input.contentBase64);
  let parsed;
  try {
    parsed = await parseDataset(input.format, bytes);
  } catch (error) {
    if (error instanceof DatasetParseError) throw badRequest([{ path: "file", message: error.message }], "invalid dataset");
    throw error;
  }
  const { id } = await storeUploadedDataset(db, { ...input, bytes, parsed });
  return getDataset(db, id);
}

export async function createDatasetReference(db: Db, input: z.output<typeof DatasetReferenceInput>): Promise<DatasetSummary> {
  await assertNameFree(db, input.name);
  const row = await db.dataset.create({
    data:
      input.kind === "huggingface"
        ? {
            name: input.name,
            kind: "huggingface",
            format: "huggingface",
            description: input.description,
            evalFraction: input.evalFraction,
            location: { id: input.id, split: input.split, ...(input.config ? { config: input.config } : {}) },
            columns: [],
          }
        : {
            name: input.name,
            kind: "local",
            format: input.format,
            description: input.description,
            evalFraction: input.evalFraction,
            location: { path: input.path },
            columns: [],
          },
    select: SUMMARY_SELECT,
  });
  return toSummary(row);
}

export async function updateDataset(db: Db, input: z.output<typeof DatasetUpdateInput>): Promise<DatasetSummary> {
  const existing = await db.dataset.findUnique({ where: { id: input.id }, select: { id: true } });
  if (!existing) throw notFound(input.id);
  if (input.name !== undefined) await assertNameFree(db, input.name, input.id);
  const row = await db.dataset.update({
    where: { id: input.id },
    data: {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.evalFraction !== undefined ? { evalFraction: input.evalFraction } : {}),
    },
    select: SUMMARY_SELECT,
  });
  return toSummary(row);
}

/** The first `limit` rows of an upload, re-read from the stored file (what the runtime will read). */
export async function previewDataset(db: Db, id: string, limit: number) {
  const row = await db.dataset.findUnique({
    where: { id },
    select: { id: true, kind: true, format: true, content: true, columns: true, columnTypes: true },
  });
  if (!row) throw notFound(id);
  const columns = row.columns as string[];
  const columnTypes = row.columnTypes as Record<string, string>;
  if (row.kind !== "upload" || !row.content) {
    const where = row.kind === "huggingface" ? "the Hugging Face hub" : "the runner host";
    return { id, columns, columnTypes, rows: [], unavailable: `read from ${where} when a run starts; no rows are stored here` };
  }
  const parsed = await parseDataset(row.format as DatasetFormat, new Uint8Array(row.content));
  return { id, columns, columnTypes, rows: parsed.preview.slice(0, limit), unavailable: null };
}

export async function deleteDataset(db: Db, id: string): Promise<{ id: string; deleted: true }> {
  const { count } = await db.dataset.deleteMany({ where: { id } });
  if (count === 0) throw notFound(id);
  return { id, deleted: true };
}
