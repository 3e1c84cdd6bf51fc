// @troupe/db: the Prisma client and the small database helpers web and runner share.
// One job per file; each module is re-exported by one line here.
export { createDb, type Db } from "./client";
export * from "./generated/prisma/client";
export { DEMO_EXPERIMENT_ID, DEMOS, MULTI_AGENT_DEMO_EXPERIMENT_ID, seedDemo, seedDemos, type SeedOutcome } from "./seedDemo";
export * from "./events/index";
export * from "./runs";
export * from "./rewind";
