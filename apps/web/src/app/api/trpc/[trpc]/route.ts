import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { createRequestContext } from "../../../../server/api/context";
import { appRouter } from "../../../../server/api/root";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const handler = (req: Request) =>
  fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: () => createRequestContext(),
    onError({ path, error }) {
      if (error.code === "INTERNAL_SERVER_ERROR") console.error(`[trpc] ${path ?? "?"}:`, error);
    },
  });

export { handler as GET, handler as POST };
