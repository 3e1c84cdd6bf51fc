import { defineConfig } from "@playwright/test";
import { execSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { ADMIN_STATE } from "./global-setup";

// Browser tests run in Debian's Chromium (never a downloaded browser) against a real web app,
// runner, Postgres and Redis started by scripts/test.mjs, which passes TROUPE_BASE_URL.
function chromiumPath(): string {
  if (process.env.TROUPE_CHROMIUM) return process.env.TROUPE_CHROMIUM;
  try {
    return execSync("command -v chromium || command -v chromium-browser", { shell: "/bin/sh" }).toString().trim();
  } catch {
    throw new Error("chromium not found: apt-get install chromium, or set TROUPE_CHROMIUM");
  }
}

const baseURL = process.env.TROUPE_BASE_URL;
if (!baseURL) throw new Error("TROUPE_BASE_URL is not set: run the browser tests through scripts/test.sh");

export default defineConfig({
  testDir: "./tests",
  // Signs in as the first administrator once; every test (present and future) starts signed in.
  // A test that needs someone else opens a context of its own (see tests/auth.spec.ts).
  globalSetup: fileURLToPath(new URL("./global-setup.ts", import.meta.url)),
  timeout: 240_000,
  expect: { timeout: 15_000 },
  workers: 1,
  retries: 0,
  reporter: [["list"], ["json", { outputFile: process.env.TROUPE_E2E_REPORT ?? "test-results/e2e.json" }]],
  outputDir: "test-results",
  use: {
    baseURL,
    storageState: ADMIN_STATE,
    screenshot: "only-on-failure",
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: chromiumPath(),
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
    },
  },
});
