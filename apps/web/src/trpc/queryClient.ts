import { QueryClient } from "@tanstack/react-query";
import superjson from "superjson";

/**
 * One QueryClient setup for the browser and for server components that prefetch: what a server
 * component dehydrates (dates included, hence superjson) the browser hydrates unchanged.
 */
export function makeQueryClient() {
  return new QueryClient({
    defaultOptions: {
      queries: { staleTime: 2000, refetchOnWindowFocus: false, retry: 1 },
      dehydrate: { serializeData: superjson.serialize },
      hydrate: { deserializeData: superjson.deserialize },
    },
  });
}
