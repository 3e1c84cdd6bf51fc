import type { Db } from "../../../server/db";
import { dependencyDown } from "../../../server/dependencyErrors";
import { bootstrapFirstAdmin } from "./users";

const RETRY_MS = 10_000;

/**
 * On start: create the first administrator if there is no user yet, and say so once in the web
 * process's output (which the start script shows). A generated password is printed only here, once.
 * Postgres not up yet: one line, then retried every 10 s until it works.
 */
export function ensureFirstAdmin(db: Db, env: { email?: string; password?: string }, log: (line: string) => void = console.log): void {
  let warned = false;
  const attempt = async () => {
    try {
      const result = await bootstrapFirstAdmin(db, env);
      if (!result.created) return;
      log(`[troupe-web] First administrator created: ${result.email}`);
      if (result.password) {
        log(`[troupe-web]   password: ${result.password}`);
        log("[troupe-web]   (shown only now; sign in, then invite people under Users. Set TROUPE_ADMIN_EMAIL and TROUPE_ADMIN_PASSWORD to choose them.)");
      } else {
        log("[troupe-web]   password: the one in TROUPE_ADMIN_PASSWORD");
      }
    } catch (error) {
      if (!warned) {
        const down = dependencyDown(error);
        log(`[troupe-web] could not check for a first administrator (${down ? `${down} is unreachable` : error instanceof Error ? error.message.split("\n")[0] : String(error)}); retrying every ${RETRY_MS / 1000} s`);
        warned = true;
      }
      setTimeout(() => void attempt(), RETRY_MS).unref();
    }
  };
  void attempt();
}
