import { experimentRouter } from "../../features/experiments/server/router";
import { runRouter } from "../../features/runs/server/router";
import { tokenRouter } from "../../features/tokens/server/router";
import { createCallerFactory, createTRPCRouter } from "./trpc";

/** One router per domain, merged here. */
export const appRouter = createTRPCRouter({
  experiment: experimentRouter,
  run: runRouter,
  token: tokenRouter,
});

export type AppRouter = typeof appRouter;

/** Server-side caller (tests, server components): `createCaller(context).run.byId({ runId })`. */
export const createCaller = createCallerFactory(appRouter);
