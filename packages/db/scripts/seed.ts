/** `npm run -w @troupe/db seed`: make sure the demo experiment exists (idempotent; see src/seedDemo.ts). */
import { createDb, seedDemo } from "../src/index";
import { requireDatabaseUrl, runMain } from "./cliEnv";

runMain(async () => {
  const db = createDb(requireDatabaseUrl());
  try {
    const { id, outcome } = await seedDemo(db);
    console.log(`Demo experiment ${id}: ${outcome}.`);
  } finally {
    await db.$disconnect();
  }
});
