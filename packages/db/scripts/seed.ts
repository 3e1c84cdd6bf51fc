/** `npm run -w @troupe/db seed`: make sure the demo experiments exist (idempotent; see src/seedDemo.ts). */
import { createDb, seedDemos } from "../src/index";
import { requireDatabaseUrl, runMain } from "./cliEnv";

runMain(async () => {
  const db = createDb(requireDatabaseUrl());
  try {
    for (const { id, outcome } of await seedDemos(db)) console.log(`Demo experiment ${id}: ${outcome}.`);
  } finally {
    await db.$disconnect();
  }
});
