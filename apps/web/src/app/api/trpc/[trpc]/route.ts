import { TRPCError } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { createRequestContext } from "../../../../server/api/context";
import { appRouter } from "../../../../server/api/root";
import { authenticateRequest } from "../../../../features/auth/server/requestAuth";
import { getDb } from "../../../../server/db";
import { dependencyDown } from "../../../../server/dependencyErrors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const handler = (req: Request) =>
  fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    // Who is calling comes first; every procedure then checks the role it needs (server/api/trpc.ts).
    createContext: async () => {
      try {
        return createRequestContext(await authenticateRequest(getDb(), req));
      } catch (error) {
        const down = dependencyDown(error);
        if (down) throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: `${down} is unreachable; try again shortly`, cause: error });
        throw error;
      }
    },
    onError({ path, error }) {
      if (error.code === "INTERNAL_SERVER_ERROR") console.error(`[trpc] ${path ?? "?"}:`, error);
    },
  });

export { handler as GET, handler as POST };
