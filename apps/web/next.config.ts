import path from "node:path";
import { fileURLToPath } from "node:url";
import type { NextConfig } from "next";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

const nextConfig: NextConfig = {
  // Our workspace packages ship TypeScript source, so Next compiles them with the app.
  transpilePackages: ["@troupe/contracts", "@troupe/db", "@troupe/dsl"],
  // Node-only libraries with native bits, workers or dynamic requires: load them from node_modules at run time.
  serverExternalPackages: ["pg", "bullmq", "ioredis", "@prisma/client", "@prisma/adapter-pg", "@prisma/driver-adapter-utils"],
  // npm workspaces hoist dependencies to the repo root; tell Next where the root is.
  turbopack: { root: repoRoot },
  outputFileTracingRoot: repoRoot,
  // A second build folder (e.g. a benchmark's production build) must not replace the one tests use.
  distDir: process.env.TROUPE_NEXT_DIST_DIR || ".next",
  poweredByHeader: false,
  // Every response: never framed, no MIME sniffing, no referrer leaving the site (invitation links
  // carry a secret in their path). Pages also get a nonce-based CSP from src/proxy.ts.
  async headers() {
    return [
      {
        source: "/:path*",
        headers: [
          { key: "X-Frame-Options", value: "DENY" },
          { key: "Content-Security-Policy", value: "frame-ancestors 'none'; object-src 'none'; base-uri 'self'" },
          { key: "X-Content-Type-Options", value: "nosniff" },
          { key: "Referrer-Policy", value: "same-origin" },
          { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
          { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=(), payment=(), usb=()" },
        ],
      },
    ];
  },
  reactStrictMode: true,
};

export default nextConfig;
