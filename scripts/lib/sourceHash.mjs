// Fingerprint of what `next build` reads, so a start rebuilds the web app only after a real change.
//
// Contents, not file times: a checkout, a `touch`, or an editor's save-without-change must not cost
// a multi-minute build. Files the build itself writes are left out (`next-env.d.ts`, incremental
// TypeScript state, build folders): with them in, the first build changed its own fingerprint and
// every second start rebuilt for nothing.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

/** Folders and files (relative to the repository root) that the web build compiles or is configured by. */
export const BUILD_INPUTS = [
  "apps/web/src",
  "apps/web/public",
  "apps/web/next.config.ts",
  "apps/web/package.json",
  "apps/web/tsconfig.json",
  "packages/contracts/src",
  "packages/contracts/package.json",
  "packages/db/src",
  "packages/db/package.json",
  "packages/dsl/src",
  "packages/dsl/package.json",
  "tsconfig.base.json",
  "package-lock.json",
];

/** Names never read by the build as source: build outputs, dependencies, editor and OS litter. */
const SKIP_NAMES = new Set(["node_modules", "next-env.d.ts", ".DS_Store"]);
const SKIP_PATTERNS = [/^\.next/, /\.tsbuildinfo$/, /^\.troupe-/, /~$/, /\.swp$/];

function skipped(name) {
  return SKIP_NAMES.has(name) || SKIP_PATTERNS.some((re) => re.test(name));
}

/** sha256 over the relative path and bytes of every build input under `root`, in a stable order. */
export function sourceHash(root, inputs = BUILD_INPUTS) {
  const h = createHash("sha256");
  const add = (path) => {
    if (!existsSync(path)) return;
    const name = path.slice(path.lastIndexOf("/") + 1);
    if (skipped(name)) return;
    const st = statSync(path);
    if (st.isDirectory()) {
      for (const child of readdirSync(path).sort()) add(join(path, child));
    } else if (st.isFile()) {
      h.update(`${relative(root, path)}\0`);
      h.update(readFileSync(path));
      h.update("\0");
    }
  };
  for (const input of inputs) add(join(root, input));
  return h.digest("hex");
}
