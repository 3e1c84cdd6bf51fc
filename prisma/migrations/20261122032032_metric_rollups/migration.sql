-- CreateTable
CREATE TABLE "MetricRollup" (
    "runId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "actor" TEXT NOT NULL DEFAULT '',
    "level" INTEGER NOT NULL,
    "bucket" INTEGER NOT NULL,
    "firstStep" INTEGER NOT NULL,
    "lastStep" INTEGER NOT NULL,
    "lastValue" DOUBLE PRECISION NOT NULL,
    "minValue" DOUBLE PRECISION NOT NULL,
    "maxValue" DOUBLE PRECISION NOT NULL,
    "count" INTEGER NOT NULL,
    "lastTs" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "MetricRollup_pkey" PRIMARY KEY ("runId","name","actor","level","bucket")
);

-- AddForeignKey
ALTER TABLE "MetricRollup" ADD CONSTRAINT "MetricRollup_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Keep MetricRollup in step with MetricPoint: one statement-level trigger per insert batch (the event
-- store inserts with ON CONFLICT DO NOTHING, so the transition table holds only new points).
CREATE FUNCTION "troupe_metric_rollup"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "MetricRollup" AS r ("runId", "name", "actor", "level", "bucket", "firstStep", "lastStep", "lastValue", "minValue", "maxValue", "count", "lastTs")
  SELECT p."runId", p."name", p."actor", l.level, p."step" / l.width, min(p."step"), max(p."step"),
         (array_agg(p."value" ORDER BY p."step" DESC))[1], min(p."value"), max(p."value"), count(*)::int,
         (array_agg(p."ts" ORDER BY p."step" DESC))[1]
  FROM new_points p CROSS JOIN (VALUES (1, 16), (2, 256), (3, 4096), (4, 65536), (5, 1048576)) AS l(level, width)
  GROUP BY p."runId", p."name", p."actor", l.level, p."step" / l.width
  ON CONFLICT ("runId", "name", "actor", "level", "bucket") DO UPDATE SET
    "firstStep" = least(r."firstStep", excluded."firstStep"),
    "lastValue" = CASE WHEN excluded."lastStep" >= r."lastStep" THEN excluded."lastValue" ELSE r."lastValue" END,
    "lastTs" = CASE WHEN excluded."lastStep" >= r."lastStep" THEN excluded."lastTs" ELSE r."lastTs" END,
    "lastStep" = greatest(r."lastStep", excluded."lastStep"),
    "minValue" = least(r."minValue", excluded."minValue"),
    "maxValue" = greatest(r."maxValue", excluded."maxValue"),
    "count" = r."count" + excluded."count";
  RETURN NULL;
END
$$;

CREATE TRIGGER "MetricPoint_rollup" AFTER INSERT ON "MetricPoint"
  REFERENCING NEW TABLE AS new_points FOR EACH STATEMENT EXECUTE FUNCTION "troupe_metric_rollup"();

-- Points stored before this migration.
INSERT INTO "MetricRollup" ("runId", "name", "actor", "level", "bucket", "firstStep", "lastStep", "lastValue", "minValue", "maxValue", "count", "lastTs")
SELECT p."runId", p."name", p."actor", l.level, p."step" / l.width, min(p."step"), max(p."step"),
       (array_agg(p."value" ORDER BY p."step" DESC))[1], min(p."value"), max(p."value"), count(*)::int,
       (array_agg(p."ts" ORDER BY p."step" DESC))[1]
FROM "MetricPoint" p CROSS JOIN (VALUES (1, 16), (2, 256), (3, 4096), (4, 65536), (5, 1048576)) AS l(level, width)
GROUP BY p."runId", p."name", p."actor", l.level, p."step" / l.width;
