import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { request, type FullConfig } from "@playwright/test";

/**
 * Every browser test runs signed in as the first administrator: sign in once over HTTP (the same
 * form post the sign-in page makes) and save the session cookie as the tests' storage state.
 * The credentials are the ones scripts/test.mjs gave the web app (TROUPE_ADMIN_EMAIL/PASSWORD),
 * from which it created the first administrator when it started.
 */
// Beside the run's report (per TROUPE_TEST_DIR, so side-by-side test runs do not share it).
const stateDir = process.env.TROUPE_E2E_REPORT ? dirname(process.env.TROUPE_E2E_REPORT) : fileURLToPath(new URL("./test-results", import.meta.url));
export const ADMIN_STATE = join(stateDir, "e2e-admin-session.json");

export default async function globalSetup(config: FullConfig): Promise<void> {
  const baseURL = config.projects[0]?.use.baseURL;
  const email = process.env.TROUPE_ADMIN_EMAIL;
  const password = process.env.TROUPE_ADMIN_PASSWORD;
  if (!baseURL || !email || !password) {
    throw new Error("TROUPE_BASE_URL, TROUPE_ADMIN_EMAIL and TROUPE_ADMIN_PASSWORD must be set: run the browser tests through scripts/test.sh");
  }
  const context = await request.newContext({ baseURL });
  // The web app creates the first administrator as it starts: give it a few seconds.
  let status = 0;
  for (let attempt = 0; attempt < 30; attempt++) {
    const response = await context.post("/api/auth/sign-in", { data: { email, password } });
    status = response.status();
    if (status === 200) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  if (status !== 200) throw new Error(`signing in as ${email} failed with HTTP ${status}`);
  mkdirSync(dirname(ADMIN_STATE), { recursive: true });
  await context.storageState({ path: ADMIN_STATE });
  await context.dispose();
}
