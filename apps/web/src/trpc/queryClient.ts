import { MutationCache, QueryCache, QueryClient } from "@tanstack/react-query";
import { transformer } from "./transformer";

/**
 * One QueryClient setup for the browser and for server components that prefetch: what a server
 * component dehydrates (dates included, hence superjson) the browser hydrates unchanged.
 */
export function makeQueryClient(onError?: (error: unknown) => void) {
  return new QueryClient({
    ...(onError ? { queryCache: new QueryCache({ onError }), mutationCache: new MutationCache({ onError }) } : {}),
    defaultOptions: {
      queries: { staleTime: 2000, refetchOnWindowFocus: false, retry: 1 },
      dehydrate: { serializeData: transformer.serialize },
      hydrate: { deserializeData: transformer.deserialize },
    },
  });
}
