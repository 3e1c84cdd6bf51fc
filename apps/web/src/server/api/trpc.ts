import { initTRPC, TRPCError } from "@trpc/server";
import type { Redis } from "ioredis";
import superjson from "superjson";
import { ZodError } from "zod";
import { fieldIssues, type FieldIssue } from "@troupe/contracts";
import type { Db } from "../db";
import type { RewardTestClient, RunQueue } from "../redis";

/** What every procedure gets: real services, passed in so tests can build a context of their own. */
export interface TRPCContext {
  db: Db;
  /** Shared connection for short commands (stream appends, control messages). */
  redis: Redis;
  runQueue: RunQueue;
  /** Reward tests (designer Test button); the process-wide client when absent. */
  rewardTests?: RewardTestClient;
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
  transformer: superjson,
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    const issues =
      cause instanceof FieldValidationError ? cause.issues : cause instanceof ZodError ? fieldIssues(cause) : null;
    // A zod input error's default message is a JSON dump; say it the way a person reads it.
    const message = cause instanceof ZodError && issues ? issues.map((i) => `${i.path}: ${i.message}`).join("; ") : shape.message;
    return { ...shape, message, data: { ...shape.data, fieldIssues: issues } };
  },
});

export const createTRPCRouter = t.router;
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure;
