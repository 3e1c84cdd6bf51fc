import { createHash } from "node:crypto";
import type { Db } from "../../../server/db";
import type { DatasetFormat, ParsedDataset } from "./parseDataset";

/**
 * Stores an uploaded dataset whole in ONE insert (content, sha256, columns and types), so a bad or
 * interrupted upload leaves nothing behind. Used by the REST upload and the designer.
 */
export async function storeUploadedDataset(
  db: Db,
  args: {
    name: string;
    format: DatasetFormat;
    bytes: Uint8Array;
    parsed: ParsedDataset;
    description?: string;
    evalFraction?: number;
  },
) {
  return db.dataset.create({
    data: {
      name: args.name,
      kind: "upload",
      format: args.format,
      description: args.description ?? "",
      byteSize: args.bytes.byteLength,
      rowCount: args.parsed.rowCount,
      columns: args.parsed.columns,
      columnTypes: args.parsed.columnTypes,
      evalFraction: args.evalFraction ?? 0,
      sha256: createHash("sha256").update(args.bytes).digest("hex"),
      content: Buffer.from(args.bytes),
    },
    select: { id: true, name: true, format: true, byteSize: true, rowCount: true, columns: true, sha256: true, createdAt: true },
  });
}
