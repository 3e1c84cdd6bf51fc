import { z } from "zod";
import { ROLES } from "../lib/roles";
import { textProblem } from "../../../server/inputText";
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "./password";

export const RoleSchema = z.enum(ROLES);
export const Email = z.string().trim().min(3, "is required").max(254, "must be at most 254 characters").email("must be an email address");
export const Password = z
  .string()
  .min(PASSWORD_MIN_LENGTH, `must be at least ${PASSWORD_MIN_LENGTH} characters`)
  .max(PASSWORD_MAX_LENGTH, `must be at most ${PASSWORD_MAX_LENGTH} characters`);

export const AuthUserOut = z.object({ id: z.string(), email: z.string(), name: z.string(), role: RoleSchema });
export const MeOutput = z.object({ user: AuthUserOut, via: z.enum(["session", "token"]) });

export const UserOut = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  role: RoleSchema,
  state: z.enum(["active", "invited", "disabled"]),
  inviteExpiresAt: z.date().nullable(),
  createdAt: z.date(),
});
export const UserListOutput = z.object({ items: z.array(UserOut) });

export const UserInviteInput = z.object({ email: Email, name: z.string().trim().max(100, "must be at most 100 characters").default(""), role: RoleSchema }).strict();
/** The invitation link's path (`/invite/<secret>`): shown once; only its hash is stored. */
export const UserInviteOutput = z.object({ user: UserOut, invitePath: z.string() });
export const UserIdInput = z.object({ id: z.string().min(1).max(100) }).strict();
export const UserSetRoleInput = z.object({ id: z.string().min(1).max(100), role: RoleSchema }).strict();
export const UserSetDisabledInput = z.object({ id: z.string().min(1).max(100), disabled: z.boolean() }).strict();

/** Bodies of the sign-in and accept-invitation routes (JSON or a form post). */
export const SignInBody = z.object({
  // A NUL cannot be in any stored email (Postgres refuses it in a query): 400 here, not a 500 there.
  email: z.string().trim().min(1, "is required").max(254).refine((v) => !textProblem(v), { error: (i) => textProblem(String(i.input)) ?? "is not valid text" }),
  password: z.string().min(1, "is required").max(PASSWORD_MAX_LENGTH),
});
export const AcceptInviteBody = z.object({ secret: z.string().min(1).max(100), password: Password });
