"use client";

import { QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchStreamLink, loggerLink, TRPCClientError } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { useState, type ReactNode } from "react";
import { transformer } from "./transformer";
import type { AppRouter } from "../server/api/root";
import { makeQueryClient } from "./queryClient";

export const { TRPCProvider, useTRPC } = createTRPCContext<AppRouter>();


/** A session that ended (signed out elsewhere, expired, user disabled): back to sign-in, then here again. */
function signInAgainOnUnauthorized(error: unknown) {
  if (!(error instanceof TRPCClientError)) return;
  const data = (error as TRPCClientError<AppRouter>).data;
  if (data?.code !== "UNAUTHORIZED" && data?.httpStatus !== 401) return;
  const here = window.location.pathname + window.location.search;
  window.location.assign(`/sign-in?next=${encodeURIComponent(here)}`);
}

export function TRPCReactProvider({ children }: { children: ReactNode }) {
  const [queryClient] = useState(() => makeQueryClient(signInAgainOnUnauthorized));
  const [trpcClient] = useState(() =>
    createTRPCClient<AppRouter>({
      links: [
        loggerLink({ enabled: (op) => process.env.NODE_ENV === "development" && op.direction === "down" && op.result instanceof Error }),
        // Streamed batches: each query of a batch arrives when it is ready, so a fast one (the run's
        // metric names) is not held back by a slow neighbour (its memory timeline).
        httpBatchStreamLink({ url: "/api/trpc", transformer }),
      ],
    }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
