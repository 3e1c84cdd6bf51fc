import { ApiError, problemResponse } from "../../../../features/api/server/problem";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Any other path under /api/v1: a problem+json 404 naming where the reference is, not an HTML page. */
function notFound(request: Request): Response {
  const path = new URL(request.url).pathname;
  return problemResponse(ApiError.notFound(`no API endpoint ${request.method} ${path}; see /api/v1/docs`), path);
}

export { notFound as GET, notFound as POST, notFound as PUT, notFound as PATCH, notFound as DELETE };
