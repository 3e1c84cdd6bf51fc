import { NextResponse, type NextRequest } from "next/server";
import { contentSecurityPolicy, hostAllowed, isPublicPage, originAllowed, parseAllowedHosts } from "./features/auth/lib/requestGuard";
import { SESSION_COOKIE } from "./features/auth/lib/sessionCookieName";
import { requestShapeProblem } from "./lib/requestShape";

/**
 * In front of every page and route (Next 16 "proxy", formerly middleware): refuse foreign Host
 * headers (DNS rebinding) and cross-origin writes (CSRF), send anonymous page views to sign-in, and
 * give each page a CSP nonce. The session itself is checked against the database by the page
 * (root layout) and by every route: a cookie's mere presence lets nothing through.
 */

const allowed = parseAllowedHosts(process.env.TROUPE_ALLOWED_HOSTS);

function refuse(status: number, message: string): NextResponse {
  return new NextResponse(`${message}\n`, { status, headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" } });
}

export function proxy(request: NextRequest) {
  // A malformed percent-escape or an over-long URL: 4xx here, before Next decodes the path (a 500).
  const shape = requestShapeProblem(request.url);
  if (shape) return refuse(shape.status, shape.message);
  const host = request.headers.get("host");
  if (!hostAllowed(host, allowed)) {
    return refuse(421, `host ${JSON.stringify(host ?? "")} is not served here; an operator adds it to TROUPE_ALLOWED_HOSTS`);
  }
  const origin = { origin: request.headers.get("origin"), host, secFetchSite: request.headers.get("sec-fetch-site") };
  if (!originAllowed(request.method, origin)) return refuse(403, "cross-origin request refused");

  const { pathname, search } = request.nextUrl;
  if (pathname.startsWith("/api/")) return NextResponse.next();

  if (!isPublicPage(pathname) && !request.cookies.get(SESSION_COOKIE)?.value) {
    const signIn = new URL("/sign-in", request.url);
    signIn.searchParams.set("next", pathname + search);
    return NextResponse.redirect(signIn, 303);
  }

  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
  const csp = contentSecurityPolicy(nonce, process.env.NODE_ENV === "development");
  const requestHeaders = new Headers(request.headers);
  // Next reads the nonce from the request's CSP header and puts it on its own scripts.
  requestHeaders.set("content-security-policy", csp);
  requestHeaders.set("x-nonce", nonce);
  // The root layout decides (with the database) whether this page needs a session.
  requestHeaders.set("x-troupe-pathname", pathname);
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  response.headers.set("content-security-policy", csp);
  return response;
}

export const config = {
  matcher: ["/((?!_next/static|_next/image|favicon.ico|icon.svg).*)"],
};
