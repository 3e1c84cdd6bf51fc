// Starts Troupe: Postgres + Redis (ours unless DATABASE_URL / REDIS_URL are set), migrations,
// the demo seed, the web app and one runner. Ctrl-C stops all of it.
import { existsSync, readFileSync, writeFileSync, statSync, readdirSync } from "node:fs";
import { createHash } from "node:crypto";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureServices, ServiceError } from "./lib/services.mjs";
import { mustRun, startService, waitForHttp } from "./lib/proc.mjs";

const root = resolve(fileURLToPath(import.meta.url), "../..");
const port = Number(process.env.PORT ?? 3000);
const dataDir = process.env.TROUPE_DATA_DIR ?? join(root, ".troupe/data");

/** Fingerprint of the web's sources, so a start rebuilds only after a change. */
function sourceHash() {
  const h = createHash("sha256");
  const walk = (dir) => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir).sort()) {
      if (name === "node_modules" || name === ".next" || name === "generated") continue;
      const p = join(dir, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else h.update(`${p}:${st.size}:${st.mtimeMs}\n`);
    }
  };
  ["apps/web", "packages/contracts/src", "packages/db/src", "packages/dsl/src"].forEach((d) => walk(join(root, d)));
  h.update(readFileSync(join(root, "package-lock.json")));
  return h.digest("hex");
}

async function main() {
  const services = await ensureServices({ dataDir, dbName: "troupe", persistRedis: true });
  const env = { DATABASE_URL: services.databaseUrl, REDIS_URL: services.redisUrl, PORT: String(port) };
  const running = [];
  let stopping = false;
  const shutdown = async (code = 0) => {
    if (stopping) return;
    stopping = true;
    console.log("\nstopping Troupe…");
    for (const s of running.reverse()) await s.stop();
    await services.stop();
    process.exit(code);
  };
  process.on("SIGINT", () => shutdown(0));
  process.on("SIGTERM", () => shutdown(0));

  try {
    await mustRun("npm", ["run", "-s", "-w", "@troupe/db", "migrate"], { cwd: root, env, label: "migrate" });
    await mustRun("npm", ["run", "-s", "-w", "@troupe/db", "seed"], { cwd: root, env, label: "seed demo" });
    const hashFile = join(root, "apps/web/.next/.troupe-source-hash");
    const hash = sourceHash();
    if (!existsSync(hashFile) || readFileSync(hashFile, "utf8") !== hash) {
      await mustRun("npm", ["run", "-s", "-w", "@troupe/web", "build"], { cwd: root, env, label: "build web (first start or sources changed)" });
      writeFileSync(hashFile, hash);
    }
    const web = startService("web", "npx", ["next", "start", "-p", String(port)], { cwd: join(root, "apps/web"), env });
    running.push(web);
    const runner = startService("runner", "npx", ["tsx", "src/main.ts"], { cwd: join(root, "apps/runner"), env });
    running.push(runner);
    for (const s of running) s.exited.then(({ code, signal }) => {
      if (!stopping) {
        console.error(`${s.name} exited (${signal ?? `code ${code}`}); stopping Troupe`);
        shutdown(1);
      }
    });
    await waitForHttp(`http://127.0.0.1:${port}/api/health`, { service: web });
    console.log(`\n  Troupe is running: http://localhost:${port}\n  (Ctrl-C stops web, runner${services.started.length ? ", " + services.started.join(", ") : ""})\n`);
  } catch (e) {
    console.error(`error: ${e instanceof Error ? e.message : e}`);
    await shutdown(1);
  }
}

main().catch((e) => {
  console.error(e instanceof ServiceError ? `error: ${e.message}` : e);
  process.exit(1);
});
