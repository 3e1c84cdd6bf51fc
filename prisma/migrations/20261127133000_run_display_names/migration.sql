-- Readable run names (W&B style, e.g. `brisk-otter-17`): adjective-noun-number, drawn by Postgres'
-- random() when a run is inserted, so every path that creates a run (web launch, REST, re-run, seed,
-- tests) gets one without knowing about it. `Run.name` stays the spec's name, shared by every run
-- of a spec; `displayName` tells the runs apart.
--
-- 64 adjectives x 64 nouns x 99 numbers = 405,504 names. A name already taken is drawn again (and
-- after 8 tries from 1..9999), so the unique index below only ever stops two inserts racing for
-- the same fresh name. `setseed()` makes the draws repeatable in a session (the tests use it).
CREATE FUNCTION troupe_run_name() RETURNS TEXT
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  adjectives TEXT[] := ARRAY[
    'amber', 'bold', 'brave', 'breezy', 'bright', 'brisk', 'calm', 'clever',
    'cosmic', 'crisp', 'curious', 'daring', 'dapper', 'eager', 'fancy', 'fearless',
    'fluent', 'fresh', 'gentle', 'giddy', 'glad', 'golden', 'grand', 'happy',
    'hardy', 'honest', 'jolly', 'keen', 'kind', 'lively', 'lucid', 'lucky',
    'mellow', 'merry', 'mighty', 'misty', 'nimble', 'noble', 'olive', 'plucky',
    'polite', 'proud', 'quick', 'quiet', 'rapid', 'rosy', 'rustic', 'shiny',
    'silent', 'silver', 'sleek', 'snowy', 'solar', 'spry', 'steady', 'sunny',
    'swift', 'tidy', 'vivid', 'warm', 'wild', 'wise', 'witty', 'zesty'
  ];
  nouns TEXT[] := ARRAY[
    'badger', 'bear', 'beaver', 'bison', 'brook', 'cedar', 'comet', 'coral',
    'crane', 'dawn', 'delta', 'dolphin', 'dune', 'eagle', 'falcon', 'fern',
    'finch', 'fjord', 'fox', 'glacier', 'grove', 'harbor', 'hawk', 'heron',
    'horizon', 'ibis', 'koala', 'lagoon', 'lark', 'lemur', 'lynx', 'maple',
    'meadow', 'meteor', 'moon', 'moose', 'nebula', 'newt', 'oak', 'ocean',
    'orca', 'otter', 'owl', 'panda', 'pebble', 'pine', 'planet', 'quasar',
    'raven', 'reef', 'river', 'robin', 'sparrow', 'spruce', 'star', 'stream',
    'summit', 'thunder', 'tiger', 'valley', 'violet', 'walrus', 'willow', 'zephyr'
  ];
  candidate TEXT;
  tries INT := 0;
BEGIN
  LOOP
    candidate := adjectives[1 + floor(random() * array_length(adjectives, 1))::INT]
      || '-' || nouns[1 + floor(random() * array_length(nouns, 1))::INT]
      || '-' || (1 + floor(random() * CASE WHEN tries < 8 THEN 99 ELSE 9999 END))::INT;
    EXIT WHEN NOT EXISTS (SELECT 1 FROM "Run" WHERE "displayName" = candidate);
    tries := tries + 1;
  END LOOP;
  RETURN candidate;
END
$$;

-- AlterTable: existing runs get a name one at a time (each draw sees the names given before it).
ALTER TABLE "Run" ADD COLUMN "displayName" TEXT;
DO $$
DECLARE r RECORD;
BEGIN
  FOR r IN SELECT id FROM "Run" ORDER BY "createdAt", id LOOP
    UPDATE "Run" SET "displayName" = troupe_run_name() WHERE id = r.id;
  END LOOP;
END
$$;
ALTER TABLE "Run" ALTER COLUMN "displayName" SET DEFAULT troupe_run_name();
ALTER TABLE "Run" ALTER COLUMN "displayName" SET NOT NULL;

-- CreateIndex
CREATE UNIQUE INDEX "Run_displayName_key" ON "Run"("displayName");
