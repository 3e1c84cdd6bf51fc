import { TRPCError } from "@trpc/server";
import { expect } from "vitest";

/** The TRPCError a call threw, so a test can check its code and field paths; fails if it resolved. */
export async function rejectionOf(promise: Promise<unknown>): Promise<TRPCError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(TRPCError);
    return error as TRPCError;
  }
  throw new Error("expected the call to fail");
}
