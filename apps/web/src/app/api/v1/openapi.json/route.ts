import { openApiDocument } from "../../../../features/api/server/openapi";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** The OpenAPI 3.1 document of /api/v1, generated from the handlers' zod schemas. No token needed. */
export function GET() {
  return Response.json(openApiDocument(), { headers: { "cache-control": "no-cache" } });
}
