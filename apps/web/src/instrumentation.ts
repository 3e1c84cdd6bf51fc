/** Runs once when the Next.js server starts: fail fast on a wrong or missing environment variable. */
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { serverEnv, EnvError } = await import("./env");
  try {
    serverEnv();
  } catch (error) {
    if (error instanceof EnvError) {
      console.error(`[troupe-web] ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
}
