import { describe, expect, it } from "vitest";
import { contentSecurityPolicy, hostAllowed, isPublicPage, originAllowed, parseAllowedHosts } from "../src/features/auth/lib/requestGuard";
import { safeNextPath } from "../src/features/auth/server/authRoutes";

/** The proxy's checks (src/proxy.ts) as pure functions: Host (DNS rebinding), Origin (CSRF), CSP, redirects. */

describe("Host check (DNS rebinding)", () => {
  const none = parseAllowedHosts("");
  it("allows loopback names on any port and refuses every other name by default", () => {
    for (const host of ["localhost:3000", "127.0.0.1:3000", "127.0.0.1", "[::1]:3000", "LOCALHOST:80", "app.localhost:3000"]) expect(hostAllowed(host, none), host).toBe(true);
    for (const host of ["attacker.example", "attacker.example:3000", "127.0.0.1.nip.io:3000", "192.168.1.5:3000", "", "localhost.attacker.example", "a b"]) {
      expect(hostAllowed(host, none), host).toBe(false);
    }
    expect(hostAllowed(null, none)).toBe(false);
  });

  it("TROUPE_ALLOWED_HOSTS adds names (any port) or name:port (that port only); * turns the check off", () => {
    const allowed = parseAllowedHosts("troupe.internal, gpu-box:8080 ,10.0.0.7");
    expect(hostAllowed("troupe.internal", allowed)).toBe(true);
    expect(hostAllowed("troupe.internal:443", allowed)).toBe(true);
    expect(hostAllowed("gpu-box:8080", allowed)).toBe(true);
    expect(hostAllowed("gpu-box:3000", allowed)).toBe(false);
    expect(hostAllowed("10.0.0.7:3000", allowed)).toBe(true);
    expect(hostAllowed("evil.troupe.internal", allowed)).toBe(false);
    expect(hostAllowed("anything.example", parseAllowedHosts("*"))).toBe(true);
  });
});

describe("Origin check (cross-site writes)", () => {
  const host = "127.0.0.1:3000";
  it("lets reads through and same-origin or header-less (CLI) writes", () => {
    expect(originAllowed("GET", { origin: "http://attacker.example", host, secFetchSite: "cross-site" })).toBe(true);
    expect(originAllowed("POST", { origin: "http://127.0.0.1:3000", host, secFetchSite: "same-origin" })).toBe(true);
    expect(originAllowed("POST", { origin: null, host, secFetchSite: null })).toBe(true);
  });
  it("refuses writes from another origin, another port of the same host, or an opaque origin", () => {
    expect(originAllowed("POST", { origin: "http://attacker.example", host, secFetchSite: null })).toBe(false);
    expect(originAllowed("POST", { origin: "http://127.0.0.1:8080", host, secFetchSite: "same-site" })).toBe(false);
    expect(originAllowed("DELETE", { origin: "null", host, secFetchSite: null })).toBe(false);
    expect(originAllowed("POST", { origin: null, host, secFetchSite: "cross-site" })).toBe(false);
  });
});

describe("pages", () => {
  it("only sign-in and invitation links are public", () => {
    expect(isPublicPage("/sign-in")).toBe(true);
    expect(isPublicPage("/invite/abc")).toBe(true);
    for (const path of ["/", "/runs", "/settings/users", "/sign-in-x", "/invite"]) expect(isPublicPage(path), path).toBe(false);
  });

  it("CSP: scripts need the nonce (no unsafe-inline, no eval in production); never framed", () => {
    const csp = contentSecurityPolicy("abc123", false);
    expect(csp).toContain("script-src 'self' 'nonce-abc123' 'strict-dynamic'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("object-src 'none'");
    expect(contentSecurityPolicy("n", true)).toContain("'unsafe-eval'");
  });

  it("after sign-in, only a same-site path is followed", () => {
    expect(safeNextPath("/runs/abc?tab=logs")).toBe("/runs/abc?tab=logs");
    for (const bad of ["//evil.example", "https://evil.example", "/\\evil.example", "javascript:alert(1)", "", 5, null, "/\u0000"]) expect(safeNextPath(bad)).toBe("/");
  });
});
