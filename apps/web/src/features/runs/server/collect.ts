import { TRPCError } from "@trpc/server";
import { CollectInput, isTerminal, type CollectResult, type RunState } from "@troupe/contracts";
import type { z } from "zod";
import { badRequest } from "../../../server/api/trpc";
import type { Db } from "../../../server/db";
import { MAX_DATASET_BYTES, parseDataset } from "../../datasets/server/parseDataset";
import { storeUploadedDataset } from "../../datasets/server/store";
import { collectRows, rowsToJsonl, type CollectEpisode } from "../lib/collectRows";

type Input = z.output<typeof CollectInput>;

/**
 * Collect from a finished run (collectRows.ts does the choosing): its recorded episodes (`trainer.episodesPerStep`
 * per step) at or above each actor's threshold become an uploaded JSONL dataset with `prompt` / `completion`
 * columns, stored in one insert. Refused by field: a run still going, a taken name, nothing at the threshold.
 */
export async function collectFromRun(db: Db, runId: string, input: Input): Promise<CollectResult> {
  const run = await db.run.findUnique({ where: { id: runId }, select: { id: true, name: true, status: true } });
  if (!run) throw new TRPCError({ code: "NOT_FOUND", message: `run ${runId} not found` });
  if (!isTerminal(run.status as RunState)) {
    throw badRequest([{ path: "runId", message: `run "${run.name}" is ${run.status}: collect from a finished run` }]);
  }
  const clash = await db.dataset.findFirst({ where: { name: input.name }, select: { id: true } });
  if (clash) throw badRequest([{ path: "name", message: `a dataset named "${input.name}" already exists (id ${clash.id}): choose another name` }]);
  const episodes = await db.episode.findMany({
    where: { runId, ...(input.fromStep !== undefined ? { step: { gte: input.fromStep } } : {}) },
    orderBy: { seq: "asc" },
    select: { step: true, environment: true, datasetRow: true, reward: true, messages: true },
  });
  const { rows, perActor, best } = collectRows(episodes as unknown as CollectEpisode[], { runId, ...input });
  for (const actor of [...(input.actors ?? []), ...Object.keys(input.minRewardByActor ?? {})]) {
    if (!perActor.has(actor)) {
      const trained = (episodes as unknown as CollectEpisode[]).flatMap((e) => (Array.isArray(e.messages) ? e.messages.filter((m) => m.trained).map((m) => m.actor) : []));
      const known = [...new Set(trained)].join(", ") || "none";
      const path = input.actors?.includes(actor) ? "actors" : `minRewardByActor.${actor}`;
      throw badRequest([{ path, message: `no recorded episode has a trained completion by "${actor}" (actors found: ${known})` }]);
    }
  }
  if (rows.length === 0) {
    const why = episodes.length === 0 ? "the run recorded no episodes (trainer.episodesPerStep)" : `the best of ${episodes.length} episodes scored ${best ?? "nothing"}`;
    throw badRequest([{ path: "minReward", message: `no completion reached its threshold: ${why}` }]);
  }
  const bytes = new TextEncoder().encode(rowsToJsonl(rows));
  if (bytes.byteLength > MAX_DATASET_BYTES) {
    throw badRequest([{ path: "fromStep", message: `the collected rows are ${bytes.byteLength} bytes, over the ${MAX_DATASET_BYTES}-byte dataset limit: raise minReward or set fromStep` }]);
  }
  const parsed = await parseDataset("jsonl", bytes);
  const stored = await storeUploadedDataset(db, {
    name: input.name,
    format: "jsonl",
    bytes,
    parsed,
    evalFraction: input.evalFraction,
    description: input.description ?? `Collected from run "${run.name}" (${runId}): ${rows.length} completions at or above reward ${input.minReward}`,
  });
  return {
    dataset: { id: stored.id, name: stored.name, rowCount: parsed.rowCount, columns: parsed.columns },
    runId,
    episodesScanned: episodes.length,
    actors: [...perActor].map(([actor, c]) => ({ actor, ...c })),
    datasetSpec: { name: stored.name, source: { kind: "stored", datasetId: stored.id, format: "jsonl" }, evalFraction: input.evalFraction },
  };
}
