import { TRPCError } from "@trpc/server";
import { createTRPCRouter, publicProcedure } from "../../../server/api/trpc";
import { TokenCreateInput, TokenCreateOutput, TokenIdInput, TokenListOutput, TokenOut } from "./schemas";
import { createApiToken, listApiTokens, revokeApiToken } from "./tokens";

/** API tokens for the REST API (`/api/v1`): create (secret shown once), list, revoke. */
export const tokenRouter = createTRPCRouter({
  list: publicProcedure
    .output(TokenListOutput)
    .query(async ({ ctx }) => ({ items: await listApiTokens(ctx.db) })),

  create: publicProcedure
    .input(TokenCreateInput)
    .output(TokenCreateOutput)
    .mutation(({ ctx, input }) => createApiToken(ctx.db, input.name)),

  revoke: publicProcedure
    .input(TokenIdInput)
    .output(TokenOut)
    .mutation(async ({ ctx, input }) => {
      const record = await revokeApiToken(ctx.db, input.id);
      if (!record) throw new TRPCError({ code: "NOT_FOUND", message: `token ${input.id} not found` });
      return record;
    }),
});
