import { renderApiDocs } from "../../../../features/api/server/docsPage";
import { openApiDocument } from "../../../../features/api/server/openapi";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** The API reference as one self-contained HTML page (no scripts, no CDN), rendered from the OpenAPI document. */
export function GET() {
  return new Response(renderApiDocs(openApiDocument()), {
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" },
  });
}
