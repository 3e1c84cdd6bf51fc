import { createTRPCRouter, protectedProcedure } from "../../../server/api/trpc";
import { getRewardTestClient } from "../../../server/redis";
import { testReward } from "./rewardTest";
import { RewardTestInput, RewardTestOutput } from "./rewardTestSchemas";

/** Reward functions: run a reward on sample rows through a runner (never in the web process). */
export const rewardRouter = createTRPCRouter({
  test: protectedProcedure
    .input(RewardTestInput)
    .output(RewardTestOutput)
    .mutation(({ ctx, input }) => testReward(ctx.rewardTests ?? getRewardTestClient(), input)),
});
