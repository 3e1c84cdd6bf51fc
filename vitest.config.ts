import { defineConfig } from "vitest/config";

// One vitest run for every TypeScript package. Test kinds are told apart by suffix:
// *.test.ts (unit, no services) and *.int.test.ts (real Postgres + Redis from DATABASE_URL / REDIS_URL).
export default defineConfig({
  test: {
    include: ["scripts/test/**/*.test.ts", "packages/*/test/**/*.test.ts", "apps/runner/test/**/*.test.ts", "apps/web/test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests share one database; run files one after another.
    fileParallelism: false,
  },
});
