import { TRPCClientError } from "@trpc/client";
import type { FieldIssue } from "@troupe/contracts";
import type { AppRouter } from "../server/api/root";

/** Field paths and messages a procedure reported (see `errorFormatter` in server/api/trpc.ts). */
export function fieldIssuesOf(error: unknown): FieldIssue[] {
  if (error instanceof TRPCClientError) {
    const data = (error as TRPCClientError<AppRouter>).data;
    return data?.fieldIssues ?? [];
  }
  return [];
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
