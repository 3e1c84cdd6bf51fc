import { advisoryRouter } from "../../features/advisories/server/router";
import { authRouter, userRouter } from "../../features/auth/server/router";
import { datasetRouter } from "../../features/datasets/server/router";
import { partsRouter } from "../../features/designer/server/partsRouter";
import { ratingsRouter } from "../../features/ratings/server/router";
import { experimentRouter } from "../../features/experiments/server/router";
import { rewardRouter } from "../../features/rewards/server/router";
import { runnerRouter } from "../../features/runners/server/router";
import { runRouter } from "../../features/runs/server/router";
import { timelineRouter } from "../../features/timeline/server/router";
import { tokenRouter } from "../../features/tokens/server/router";
import { createCallerFactory, createTRPCRouter } from "./trpc";

/** One router per domain, merged here. */
export const appRouter = createTRPCRouter({
  advisory: advisoryRouter,
  auth: authRouter,
  dataset: datasetRouter,
  experiment: experimentRouter,
  part: partsRouter,
  ratings: ratingsRouter,
  reward: rewardRouter,
  run: runRouter,
  runner: runnerRouter,
  timeline: timelineRouter,
  token: tokenRouter,
  user: userRouter,
});

export type AppRouter = typeof appRouter;

/** Server-side caller (tests, server components): `createCaller(context).run.byId({ runId })`. */
export const createCaller = createCallerFactory(appRouter);
