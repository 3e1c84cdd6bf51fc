import { EnvError, serverEnv } from "./env";
import { ensureFirstAdmin } from "./features/auth/server/bootstrap";
import { getDb } from "./server/db";

// Fail fast on a wrong or missing environment variable, naming it, instead of on the first request.
try {
  serverEnv();
} catch (error) {
  if (error instanceof EnvError) {
    console.error(`[troupe-web] ${error.message}`);
    process.exit(1);
  }
  throw error;
}

// The first start creates the first administrator (printed once here, or taken from the environment).
ensureFirstAdmin(getDb(), { email: serverEnv().TROUPE_ADMIN_EMAIL, password: serverEnv().TROUPE_ADMIN_PASSWORD });
