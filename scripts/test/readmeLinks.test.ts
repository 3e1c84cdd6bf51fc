import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/** A clone has only what is in the repository: every file the README points to must be in it. */
const root = resolve(fileURLToPath(import.meta.url), "../../..");

describe("README links", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");

  it("point at files inside the repository that exist", () => {
    const targets = [...readme.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/.test(t));
    // Paths in backticks that name a file of ours (e.g. `packages/dsl/README.md`) count too.
    const named = [...readme.matchAll(/`((?:\.\.\/|docs\/|packages\/|apps\/|scripts\/|bench\/)[^`\s]*\.(?:md|ts|mjs|sh))`/g)].map((m) => m[1]!)
      .filter((t) => !/[*<>{}]/.test(t)); // a glob or a placeholder names no one file
    const missing = [...targets, ...named].filter((t) => !existsSync(resolve(dirname(join(root, "README.md")), t)) || !resolve(root, t).startsWith(root));
    expect(missing).toEqual([]);
  });

  it("link the architecture document", () => {
    expect(readme).toContain("(docs/architecture.md)");
  });
});
