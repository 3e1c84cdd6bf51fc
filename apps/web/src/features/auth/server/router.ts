import { TRPCError } from "@trpc/server";
import { badRequest, createTRPCRouter, protectedProcedure } from "../../../server/api/trpc";
import {
  MeOutput,
  UserIdInput,
  UserInviteInput,
  UserInviteOutput,
  UserListOutput,
  UserOut,
  UserSetDisabledInput,
  UserSetRoleInput,
} from "./schemas";
import { inviteUser, listUsers, reinviteUser, setUserDisabled, setUserRole, UserError } from "./users";

/** Signing in and out are plain routes (`/api/auth/*`): they set cookies. Here: who am I. */
export const authRouter = createTRPCRouter({
  me: protectedProcedure.output(MeOutput).query(({ ctx }) => ({ user: ctx.auth.user, via: ctx.auth.via })),
});

function asTrpc(error: unknown): never {
  if (error instanceof UserError) {
    if (error.kind === "invalid") throw badRequest([{ path: error.field, message: error.message }]);
    throw new TRPCError({ code: error.kind === "conflict" ? "CONFLICT" : "NOT_FOUND", message: error.message, cause: error });
  }
  throw error;
}

/** Administrators: invite people with a role, change roles, disable and enable users. */
export const userRouter = createTRPCRouter({
  list: protectedProcedure.output(UserListOutput).query(async ({ ctx }) => ({ items: await listUsers(ctx.db) })),

  invite: protectedProcedure
    .input(UserInviteInput)
    .output(UserInviteOutput)
    .mutation(async ({ ctx, input }) => {
      const { user, secret } = await inviteUser(ctx.db, input).catch(asTrpc);
      return { user, invitePath: `/invite/${secret}` };
    }),

  reinvite: protectedProcedure
    .input(UserIdInput)
    .output(UserInviteOutput)
    .mutation(async ({ ctx, input }) => {
      const { user, secret } = await reinviteUser(ctx.db, input.id).catch(asTrpc);
      return { user, invitePath: `/invite/${secret}` };
    }),

  setRole: protectedProcedure
    .input(UserSetRoleInput)
    .output(UserOut)
    .mutation(({ ctx, input }) => setUserRole(ctx.db, input.id, input.role).catch(asTrpc)),

  setDisabled: protectedProcedure
    .input(UserSetDisabledInput)
    .output(UserOut)
    .mutation(({ ctx, input }) => {
      if (input.disabled && input.id === ctx.auth.user.id) throw badRequest([{ path: "id", message: "you cannot disable yourself" }]);
      return setUserDisabled(ctx.db, input.id, input.disabled).catch(asTrpc);
    }),
});
