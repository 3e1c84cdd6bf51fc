/**
 * Request shapes refused in front of every route (`src/proxy.ts`), before Next decodes the path or
 * a route reads anything: a URL too long to be a real request (414), and a path segment whose
 * percent-escapes do not decode (`/api/v1/runs/%zz`, `%ED%A0%80`), which would otherwise throw
 * inside Next's parameter decoding and answer 500. Pure functions, tested without a server.
 *
 * The URL limit only works when Node parses the request at all: its HTTP parser refuses a request
 * line plus headers over `--max-http-header-size` (16 KiB by default) with 431 and a dropped
 * connection. The start scripts run the web server with MAX_HTTP_HEADER_BYTES, so a URL between
 * MAX_URL_CHARS and that limit gets a clean 414 here.
 */

/** Longest URL (path and query) any page or route accepts. tRPC batches stay far below it. */
export const MAX_URL_CHARS = 32 * 1024;
/** What the web server is started with (`node --max-http-header-size`), comfortably above MAX_URL_CHARS. */
export const MAX_HTTP_HEADER_BYTES = 256 * 1024;

export type RequestShapeProblem = { status: 400 | 414; message: string };

/** The first path segment whose percent-escapes are malformed or not UTF-8, or null. */
export function malformedSegment(pathname: string): string | null {
  for (const segment of pathname.split("/")) {
    if (!segment.includes("%")) continue;
    try {
      decodeURIComponent(segment);
    } catch {
      return segment;
    }
  }
  return null;
}

/** Why a request cannot be served as sent, or null. `url` is the full request URL. */
export function requestShapeProblem(url: string): RequestShapeProblem | null {
  const parsed = new URL(url);
  const length = parsed.pathname.length + parsed.search.length;
  if (length > MAX_URL_CHARS) {
    return { status: 414, message: `the URL is ${length} characters long; at most ${MAX_URL_CHARS} are accepted (send large inputs in a POST body)` };
  }
  const segment = malformedSegment(parsed.pathname);
  if (segment !== null) {
    const shown = segment.length > 60 ? `${segment.slice(0, 60)}…` : segment;
    return { status: 400, message: `the path segment ${JSON.stringify(shown)} has a malformed percent-escape (%XX must be hex and decode to UTF-8)` };
  }
  return null;
}
