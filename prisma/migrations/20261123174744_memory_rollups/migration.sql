-- CreateTable
CREATE TABLE "MemoryRollup" (
    "runId" TEXT NOT NULL,
    "level" INTEGER NOT NULL,
    "device" TEXT NOT NULL,
    "actor" TEXT NOT NULL DEFAULT '',
    "phase" TEXT NOT NULL,
    "bucket" INTEGER NOT NULL,
    "firstStep" INTEGER NOT NULL,
    "lastStep" INTEGER NOT NULL,
    "lastSeq" INTEGER NOT NULL,
    "count" INTEGER NOT NULL,
    "rssBytes" BIGINT,
    "allocatedBytes" BIGINT,
    "reservedBytes" BIGINT,
    "peakBytes" BIGINT,
    "topBytes" BIGINT,
    "topStep" INTEGER NOT NULL,

    CONSTRAINT "MemoryRollup_pkey" PRIMARY KEY ("runId","level","device","actor","phase","bucket")
);

-- CreateIndex
CREATE INDEX "MemorySample_runId_device_actor_phase_step_idx" ON "MemorySample"("runId", "device", "actor", "phase", "step");

-- AddForeignKey
ALTER TABLE "MemoryRollup" ADD CONSTRAINT "MemoryRollup_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Keep MemoryRollup in step with MemorySample: one statement-level trigger per insert batch (the event
-- store inserts with ON CONFLICT DO NOTHING, so the transition table holds only new samples). Every
-- column keeps its block's highest value (memory peaks matter more than averages); topStep is the
-- first step at which the block's highest coalesce(peakBytes, allocatedBytes, rssBytes) was reached.
CREATE FUNCTION "troupe_memory_rollup"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "MemoryRollup" AS r ("runId", "level", "device", "actor", "phase", "bucket", "firstStep", "lastStep", "lastSeq", "count",
                                   "rssBytes", "allocatedBytes", "reservedBytes", "peakBytes", "topBytes", "topStep")
  SELECT m."runId", l.level, m."device", m."actor", m."phase", m."step" / l.width, min(m."step"), max(m."step"), max(m."seq"), count(*)::int,
         max(m."rssBytes"), max(m."allocatedBytes"), max(m."reservedBytes"), max(m."peakBytes"),
         max(coalesce(m."peakBytes", m."allocatedBytes", m."rssBytes")),
         (array_agg(m."step" ORDER BY coalesce(m."peakBytes", m."allocatedBytes", m."rssBytes") DESC NULLS LAST, m."step"))[1]
  FROM new_samples m CROSS JOIN (VALUES (1, 16), (2, 256), (3, 4096), (4, 65536), (5, 1048576)) AS l(level, width)
  GROUP BY m."runId", l.level, m."device", m."actor", m."phase", m."step" / l.width
  ON CONFLICT ("runId", "level", "device", "actor", "phase", "bucket") DO UPDATE SET
    "firstStep" = least(r."firstStep", excluded."firstStep"),
    "lastStep" = greatest(r."lastStep", excluded."lastStep"),
    "lastSeq" = greatest(r."lastSeq", excluded."lastSeq"),
    "count" = r."count" + excluded."count",
    "rssBytes" = greatest(r."rssBytes", excluded."rssBytes"),
    "allocatedBytes" = greatest(r."allocatedBytes", excluded."allocatedBytes"),
    "reservedBytes" = greatest(r."reservedBytes", excluded."reservedBytes"),
    "peakBytes" = greatest(r."peakBytes", excluded."peakBytes"),
    "topStep" = CASE
      WHEN excluded."topBytes" > r."topBytes" OR (r."topBytes" IS NULL AND excluded."topBytes" IS NOT NULL)
        OR (excluded."topBytes" IS NOT DISTINCT FROM r."topBytes" AND excluded."topStep" < r."topStep")
      THEN excluded."topStep" ELSE r."topStep" END,
    "topBytes" = greatest(r."topBytes", excluded."topBytes");
  RETURN NULL;
END
$$;

CREATE TRIGGER "MemorySample_rollup" AFTER INSERT ON "MemorySample"
  REFERENCING NEW TABLE AS new_samples FOR EACH STATEMENT EXECUTE FUNCTION "troupe_memory_rollup"();

-- Samples stored before this migration.
INSERT INTO "MemoryRollup" ("runId", "level", "device", "actor", "phase", "bucket", "firstStep", "lastStep", "lastSeq", "count",
                            "rssBytes", "allocatedBytes", "reservedBytes", "peakBytes", "topBytes", "topStep")
SELECT m."runId", l.level, m."device", m."actor", m."phase", m."step" / l.width, min(m."step"), max(m."step"), max(m."seq"), count(*)::int,
       max(m."rssBytes"), max(m."allocatedBytes"), max(m."reservedBytes"), max(m."peakBytes"),
       max(coalesce(m."peakBytes", m."allocatedBytes", m."rssBytes")),
       (array_agg(m."step" ORDER BY coalesce(m."peakBytes", m."allocatedBytes", m."rssBytes") DESC NULLS LAST, m."step"))[1]
FROM "MemorySample" m CROSS JOIN (VALUES (1, 16), (2, 256), (3, 4096), (4, 65536), (5, 1048576)) AS l(level, width)
GROUP BY m."runId", l.level, m."device", m."actor", m."phase", m."step" / l.width;
