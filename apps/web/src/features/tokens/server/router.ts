import { TRPCError } from "@trpc/server";
import { createTRPCRouter, protectedProcedure } from "../../../server/api/trpc";
import { TokenCreateInput, TokenCreateOutput, TokenIdInput, TokenListOutput, TokenOut } from "./schemas";
import { createApiToken, listApiTokens, revokeApiToken } from "./tokens";

/**
 * API tokens for the REST API (`/api/v1`): create (secret shown once), list, revoke. A token acts as
 * the user who created it, with that user's role. Users see and revoke their own tokens;
 * administrators see and revoke everyone's.
 */
const scope = (auth: { user: { id: string; role: string } }) => (auth.user.role === "admin" ? null : auth.user.id);

export const tokenRouter = createTRPCRouter({
  list: protectedProcedure
    .output(TokenListOutput)
    .query(async ({ ctx }) => ({ items: await listApiTokens(ctx.db, scope(ctx.auth)) })),

  create: protectedProcedure
    .input(TokenCreateInput)
    .output(TokenCreateOutput)
    .mutation(({ ctx, input }) => createApiToken(ctx.db, ctx.auth.user.id, input.name)),

  revoke: protectedProcedure
    .input(TokenIdInput)
    .output(TokenOut)
    .mutation(async ({ ctx, input }) => {
      const record = await revokeApiToken(ctx.db, input.id, scope(ctx.auth));
      if (!record) throw new TRPCError({ code: "NOT_FOUND", message: `token ${input.id} not found` });
      return record;
    }),
});
