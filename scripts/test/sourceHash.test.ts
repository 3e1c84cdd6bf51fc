import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
// @ts-expect-error: plain ESM JavaScript helper without type declarations
import { sourceHash } from "../lib/sourceHash.mjs";

/** The start script rebuilds the web app only when what the build reads changed (contents, not times). */
let root: string;
const write = (path: string, text: string) => {
  mkdirSync(join(root, path, ".."), { recursive: true });
  writeFileSync(join(root, path), text);
};

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "troupe-hash-"));
  write("apps/web/src/app/page.tsx", "export default function Page() { return null; }\n");
  write("apps/web/next-env.d.ts", "/// <reference types=\"next\" />\n");
  write("packages/dsl/src/index.ts", "export const x = 1;\n");
  write("package-lock.json", "{}\n");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("sourceHash", () => {
  it("ignores what the build writes and file times", () => {
    const before = sourceHash(root);
    write("apps/web/next-env.d.ts", "/// <reference types=\"next\" />\nimport \"./.next/types/routes.d.ts\";\n");
    write("apps/web/tsconfig.tsbuildinfo", "{}");
    write("apps/web/.next/BUILD_ID", "abc");
    write("apps/web/.next-other/BUILD_ID", "abc");
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, "apps/web/src/app/page.tsx"), later, later);
    expect(sourceHash(root)).toBe(before);
  });

  it("changes when a source's bytes change, a file is added or renamed, or the lock changes", () => {
    const seen = new Set([sourceHash(root)]);
    write("apps/web/src/app/page.tsx", "export default function Page() { return 1; }\n");
    seen.add(sourceHash(root));
    write("packages/dsl/src/more.ts", "");
    seen.add(sourceHash(root));
    rmSync(join(root, "packages/dsl/src/more.ts"));
    write("packages/dsl/src/renamed.ts", "");
    seen.add(sourceHash(root));
    write("package-lock.json", "{\"v\":2}\n");
    seen.add(sourceHash(root));
    expect(seen.size).toBe(5);
  });
});
