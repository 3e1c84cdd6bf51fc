-- Memory rollup blocks of 2^level steps, level 4..20 (16 steps to 1,048,576), instead of 16^level:
-- a chart's buckets are then whole blocks of one level (the smallest power of two that fits the
-- series in the chart's width), so reading a series is one index range scan of at most maxPoints rows
-- with nothing to merge. Memory samples are few (a handful per step), so 17 levels stay cheap to keep.
CREATE OR REPLACE FUNCTION "troupe_memory_rollup"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "MemoryRollup" AS r ("runId", "level", "device", "actor", "phase", "bucket", "firstStep", "lastStep", "lastSeq", "count",
                                   "rssBytes", "allocatedBytes", "reservedBytes", "peakBytes", "topBytes", "topStep")
  SELECT m."runId", l.level, m."device", m."actor", m."phase", m."step" >> l.level, min(m."step"), max(m."step"), max(m."seq"), count(*)::int,
         max(m."rssBytes"), max(m."allocatedBytes"), max(m."reservedBytes"), max(m."peakBytes"),
         max(coalesce(m."peakBytes", m."allocatedBytes", m."rssBytes")),
         (array_agg(m."step" ORDER BY coalesce(m."peakBytes", m."allocatedBytes", m."rssBytes") DESC NULLS LAST, m."step"))[1]
  FROM new_samples m CROSS JOIN generate_series(4, 20) AS l(level)
  GROUP BY m."runId", l.level, m."device", m."actor", m."phase", m."step" >> l.level
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

-- Rebuild every run's blocks at the new levels.
DELETE FROM "MemoryRollup";
INSERT INTO "MemoryRollup" ("runId", "level", "device", "actor", "phase", "bucket", "firstStep", "lastStep", "lastSeq", "count",
                            "rssBytes", "allocatedBytes", "reservedBytes", "peakBytes", "topBytes", "topStep")
SELECT m."runId", l.level, m."device", m."actor", m."phase", m."step" >> l.level, min(m."step"), max(m."step"), max(m."seq"), count(*)::int,
       max(m."rssBytes"), max(m."allocatedBytes"), max(m."reservedBytes"), max(m."peakBytes"),
       max(coalesce(m."peakBytes", m."allocatedBytes", m."rssBytes")),
       (array_agg(m."step" ORDER BY coalesce(m."peakBytes", m."allocatedBytes", m."rssBytes") DESC NULLS LAST, m."step"))[1]
FROM "MemorySample" m CROSS JOIN generate_series(4, 20) AS l(level)
GROUP BY m."runId", l.level, m."device", m."actor", m."phase", m."step" >> l.level;
