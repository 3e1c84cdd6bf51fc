import { initTRPC, TRPCError } from "@trpc/server";
import type { Redis } from "ioredis";
import { ZodError } from "zod";
import { fieldIssues, type FieldIssue } from "@troupe/contracts";
import { hasRole } from "../../features/auth/lib/roles";
import { actionWords, roleRefusal } from "../../features/auth/lib/actionWords";
import { PROCEDURE_ROLES } from "../../features/auth/server/procedureRules";
import type { RequestAuth } from "../../features/auth/server/requestAuth";
import type { Db } from "../db";
import { dependencyDown } from "../dependencyErrors";
import { findUnstorableText } from "../inputText";
import { transformer } from "../../trpc/transformer";
import type { RewardTestClient, RunQueue } from "../redis";

/** What every procedure gets: real services, passed in so tests can build a context of their own. */
export interface TRPCContext {
  db: Db;
  /** Shared connection for short commands (stream appends, control messages). */
  redis: Redis;
  runQueue: RunQueue;
  /** Reward tests (designer Test button); the process-wide client when absent. */
  rewardTests?: RewardTestClient;
  /** Who is calling (session cookie or API token); null when anonymous. */
  auth: RequestAuth | null;
}

/**
 * An error about one or more fields of the caller's input. The field paths travel to the client in
 * `error.data.fieldIssues`, so a form can put each message next to its input.
 */
export class FieldValidationError extends Error {
  constructor(
    readonly issues: FieldIssue[],
    message = issues.map((i) => `${i.path}: ${i.message}`).join("; "),
  ) {
    super(message);
    this.name = "FieldValidationError";
  }
}

export function badRequest(issues: FieldIssue[], prefix?: string): TRPCError {
  const cause = new FieldValidationError(issues);
  return new TRPCError({ code: "BAD_REQUEST", message: prefix ? `${prefix}: ${cause.message}` : cause.message, cause });
}

const t = initTRPC.context<TRPCContext>().create({
  // superjson with keys like `constructor` allowed (see trpc/transformer.ts).
  transformer,
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    const issues =
      cause instanceof FieldValidationError ? cause.issues : cause instanceof ZodError ? fieldIssues(cause) : null;
    // A zod input error's default message is a JSON dump; say it the way a person reads it.
    const message = cause instanceof ZodError && issues ? issues.map((i) => `${i.path}: ${i.message}`).join("; ") : shape.message;
    return { ...shape, message, data: { ...shape.data, fieldIssues: issues } };
  },
});

/**
 * Who may call what, before anything else runs (input parsing included): anonymous callers get
 * UNAUTHORIZED (401), a role below the procedure's rule FORBIDDEN (403), and a procedure without a
 * rule in PROCEDURE_ROLES is refused to everyone (deny by default).
 */
const authorised = t.middleware(({ ctx, path, next }) => {
  if (!ctx.auth) throw new TRPCError({ code: "UNAUTHORIZED", message: "sign in first" });
  const needed = PROCEDURE_ROLES[path];
  if (!needed) throw new TRPCError({ code: "FORBIDDEN", message: `${path} has no access rule` });
  if (!hasRole(ctx.auth.user.role, needed)) {
    throw new TRPCError({ code: "FORBIDDEN", message: roleRefusal(ctx.auth.user.role, needed, actionWords(path)) });
  }
  return next({ ctx: { ...ctx, auth: ctx.auth } });
});

/** Postgres or Redis unreachable: 503 with a message that says which, not a 500. */
const dependencyErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok) {
    const down = dependencyDown(result.error.cause ?? result.error);
    if (down) throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: `${down} is unreachable; try again shortly`, cause: result.error });
  }
  return result;
});

/** NUL characters and lone surrogates anywhere in the input: 400 naming the field, not a driver error. */
const storableInput = t.middleware(async ({ getRawInput, next }) => {
  const issue = findUnstorableText(await getRawInput());
  if (issue) throw badRequest([issue]);
  return next();
});

export const createTRPCRouter = t.router;
export const createCallerFactory = t.createCallerFactory;
/** Every procedure: checked against PROCEDURE_ROLES first. There is no unauthenticated procedure. */
export const protectedProcedure = t.procedure.use(dependencyErrors).use(authorised).use(storableInput);
