import { EnvError, serverEnv } from "./env";

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
