/**
 * Checks every request passes before it reaches a page or a route (`src/proxy.ts`), as pure
 * functions so they can be tested without a server:
 * - Host: only names this server is meant to answer to. A DNS-rebinding page (attacker.example
 *   re-pointed at 127.0.0.1) reaches us with `Host: attacker.example` and is refused.
 * - Origin: a state-changing request from a browser must come from our own origin (CSRF), on top
 *   of SameSite=Lax session cookies.
 * - Content-Security-Policy for pages: scripts only with this response's nonce (no inline script
 *   without it, no eval in production), never framed.
 */

const LOOPBACK = new Set(["localhost", "127.0.0.1", "::1", "[::1]"]);

/** `host[:port]` → lower-case host name without brackets and the port (or null). */
export function splitHost(value: string): { name: string; port: string | null } | null {
  const trimmed = value.trim().toLowerCase();
  const bracketed = /^\[([0-9a-f:.]+)\](?::(\d{1,5}))?$/.exec(trimmed);
  if (bracketed) return { name: bracketed[1]!, port: bracketed[2] ?? null };
  const plain = /^([a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(trimmed);
  if (plain) return { name: plain[1]!, port: plain[2] ?? null };
  return null;
}

/** `TROUPE_ALLOWED_HOSTS`: comma-separated `name` (any port) or `name:port`; `*` allows any. */
export function parseAllowedHosts(value: string | undefined): { any: boolean; entries: { name: string; port: string | null }[] } {
  const items = (value ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  if (items.includes("*")) return { any: true, entries: [] };
  return { any: false, entries: items.map(splitHost).filter((h): h is { name: string; port: string | null } => h !== null) };
}

export function hostAllowed(hostHeader: string | null, allowed: ReturnType<typeof parseAllowedHosts>): boolean {
  if (allowed.any) return true;
  if (!hostHeader) return false;
  const host = splitHost(hostHeader);
  if (!host) return false;
  if (LOOPBACK.has(host.name) || host.name.endsWith(".localhost")) return true;
  return allowed.entries.some((e) => e.name === host.name && (e.port === null || e.port === host.port));
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Whether a request may change state: safe methods always; others only when the browser says the
 * request is same-origin (Origin matching Host, and Sec-Fetch-Site not cross-site). Clients that
 * send neither header (curl, the CLI, CI) are not browsers carrying someone's cookie: allowed, and
 * they need a bearer token anyway.
 */
export function originAllowed(method: string, headers: { origin: string | null; host: string | null; secFetchSite: string | null }): boolean {
  if (SAFE_METHODS.has(method.toUpperCase())) return true;
  if (headers.secFetchSite && headers.secFetchSite !== "same-origin" && headers.secFetchSite !== "none") return false;
  if (headers.origin === null) return true;
  if (headers.origin === "null" || !headers.host) return false;
  try {
    return new URL(headers.origin).host.toLowerCase() === headers.host.trim().toLowerCase();
  } catch {
    return false;
  }
}

/** Pages anyone may open (everything else needs a session). */
export function isPublicPage(pathname: string): boolean {
  return pathname === "/sign-in" || pathname.startsWith("/invite/");
}

/**
 * The pages' CSP. Styles may be inline (React's `style` attributes, Monaco, React Flow and uPlot set
 * them; CSS cannot run script); scripts need the nonce, and what they load is trusted through
 * 'strict-dynamic' (Next's chunks, Monaco's workers from our origin).
 */
export function contentSecurityPolicy(nonce: string, dev: boolean): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src 'self'${dev ? " ws: wss:" : ""}`,
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}
