// Runs every test: TypeScript unit + integration (vitest, real Postgres + Redis), the Python
// runtime (pytest, including the learning check), the web build, and the browser tests
// (Playwright in Debian's Chromium against a real web + runner). Benchmarks are not run here.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureServices } from "./lib/services.mjs";
import { freePort } from "./lib/services.mjs";
import { run, startService, stopForeground, waitForHttp } from "./lib/proc.mjs";

const root = resolve(fileURLToPath(import.meta.url), "../..");
// TROUPE_TEST_DIR lets several checkouts or sessions test side by side without sharing services.
const testDir = process.env.TROUPE_TEST_DIR ? resolve(process.env.TROUPE_TEST_DIR) : join(root, ".troupe/test");
const reports = join(testDir, "reports");
rmSync(reports, { recursive: true, force: true });
mkdirSync(reports, { recursive: true });
const only = process.argv.slice(2); // e.g. `scripts/test.sh vitest pytest` runs a subset
const wanted = (suite) => only.length === 0 || only.includes(suite);

/** The names of the failed tests in each runner's report, so the summary (all a CI log's tail may show) names them. */
const failures = {
  vitest: () => {
    const r = JSON.parse(readFileSync(join(reports, "vitest.json"), "utf8"));
    return r.testResults.flatMap((file) => {
      const failed = file.assertionResults.filter((a) => a.status === "failed").map((a) => `${file.name.replace(`${root}/`, "")} > ${a.fullName}`);
      // A file that failed before any test ran (an import or hook error) has no failed assertion of its own.
      return failed.length > 0 || file.status !== "failed" ? failed : [`${file.name.replace(`${root}/`, "")}: ${String(file.message ?? "").split("\n")[0]}`];
    });
  },
  pytest: () =>
    ["gpu-runtime", "kernels"].flatMap((pkg) => {
      const xml = readFileSync(join(reports, `pytest-${pkg}.xml`), "utf8");
      return [...xml.matchAll(/<testcase classname="([^"]*)" name="([^"]*)"[^>]*?(?:\/>|>([\s\S]*?)<\/testcase>)/g)]
        .filter((m) => /<(failure|error)\b/.test(m[3] ?? ""))
        .map((m) => `${pkg}: ${m[1]}::${m[2]}`);
    }),
  e2e: () => {
    const r = JSON.parse(readFileSync(join(reports, "e2e.json"), "utf8"));
    const out = [];
    const walk = (suite) => {
      for (const spec of suite.specs ?? []) {
        if (spec.tests.some((t) => t.status === "unexpected")) out.push(`${spec.file}:${spec.line} › ${spec.title}`);
      }
      for (const child of suite.suites ?? []) walk(child);
    };
    for (const suite of r.suites) walk(suite);
    return out;
  },
};

/** Reads passed/failed counts from each runner's machine-readable report. */
const counters = {
  vitest: () => {
    const r = JSON.parse(readFileSync(join(reports, "vitest.json"), "utf8"));
    return { passed: r.numPassedTests, failed: r.numFailedTests, skipped: r.numPendingTests + r.numTodoTests };
  },
  pytest: () => {
    const xml = ["gpu-runtime", "kernels"].map((p) => readFileSync(join(reports, `pytest-${p}.xml`), "utf8")).join("\n");
    const suites = [...xml.matchAll(/<testsuite [^>]*>/g)].map((m) => m[0]);
    const attr = (s, k) => Number((s.match(new RegExp(`${k}="(\\d+)"`)) ?? [])[1] ?? 0);
    const sum = (k) => suites.reduce((a, s) => a + attr(s, k), 0);
    const failed = sum("failures") + sum("errors");
    return { passed: sum("tests") - failed - sum("skipped"), failed, skipped: sum("skipped") };
  },
  e2e: () => {
    const r = JSON.parse(readFileSync(join(reports, "e2e.json"), "utf8"));
    return { passed: r.stats.expected + r.stats.flaky, failed: r.stats.unexpected, skipped: r.stats.skipped };
  },
};

async function main() {
  const results = [];
  const record = (suite, code, extra = "") => {
    let counts = { passed: 0, failed: code === 0 ? 0 : 1, skipped: 0 };
    try {
      if (counters[suite]) counts = counters[suite]();
    } catch {}
    if (code !== 0 && counts.failed === 0) counts.failed = 1; // a crash before any test ran still fails
    let failedNames = [];
    try {
      if (code !== 0 && failures[suite]) failedNames = failures[suite]();
    } catch {}
    results.push({ suite, code, ...counts, extra, failedNames });
  };

  const services = await ensureServices({
    dataDir: join(testDir, "data"),
    dbName: "troupe_test",
    recreateDb: true,
    persistRedis: false,
  });
  const env = {
    DATABASE_URL: services.databaseUrl,
    REDIS_URL: services.redisUrl,
    HF_HUB_OFFLINE: "1",
    TROUPE_WORK_DIR: join(testDir, "runs"),
    // The web app creates its first administrator from these on start; the browser tests sign in with them.
    TROUPE_ADMIN_EMAIL: "e2e-admin@troupe.test",
    TROUPE_ADMIN_PASSWORD: randomBytes(18).toString("base64url"),
  };
  let web, runner;
  // Ctrl-C: the suites in the foreground get it from the terminal; the web app, the runner, Redis and
  // Postgres run in their own process groups and are stopped here, in order, before exiting.
  let interrupted = false;
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, async () => {
      if (interrupted) return;
      interrupted = true;
      console.log(`\n${signal}: stopping the test services…`);
      await stopForeground();
      if (runner) await runner.stop();
      if (web) await web.stop();
      await services.stop();
      process.exit(130);
    });
  }
  try {
    const migrate = await run("npm", ["run", "-s", "-w", "@troupe/db", "migrate"], { cwd: root, env, label: "migrate test database" });
    if (migrate !== 0) throw new Error("migrations failed");

    if (wanted("typecheck")) {
      // TypeScript strict mode holds only if something checks it: every project, before the tests run.
      record("typecheck", await run("node", [join(root, "scripts/typecheck.mjs")], { cwd: root, env, label: "typecheck: tsc --noEmit, every TypeScript project" }));
    }

    if (wanted("vitest")) {
      const code = await run(
        "npx",
        ["vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${join(reports, "vitest.json")}`],
        { cwd: root, env, label: "vitest: contracts, db, runner, web (unit + integration)" },
      );
      record("vitest", code);
    }

    if (wanted("pytest")) {
      // One pytest per Python package, each from its own folder so its pyproject settings apply.
      let worst = 0;
      for (const pkg of ["gpu-runtime", "kernels"]) {
        const code = await run(
          join(root, ".venv/bin/python"),
          ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", "--durations=25", `--junitxml=${join(reports, `pytest-${pkg}.xml`)}`],
          { cwd: join(root, pkg), env, label: `pytest: ${pkg}` },
        );
        worst = Math.max(worst, code === 5 ? 1 : code); // 5 = no tests collected: a defect, not a pass
      }
      record("pytest", worst);
    }

    if (wanted("e2e")) {
      const build = await run("npm", ["run", "-s", "-w", "@troupe/web", "build"], { cwd: root, env, label: "next build" });
      record("build", build);
      if (build === 0) {
        const port = await freePort();
        const baseUrl = `http://127.0.0.1:${port}`;
        await run("npm", ["run", "-s", "-w", "@troupe/db", "seed"], { cwd: root, env, label: "seed demo" });
        web = startService("web", "npx", ["next", "start", "-p", String(port)], { cwd: join(root, "apps/web"), env: { ...env, PORT: String(port), NODE_OPTIONS: "--max-http-header-size=262144" } });
        runner = startService("runner", "npx", ["tsx", "src/main.ts"], { cwd: join(root, "apps/runner"), env });
        await waitForHttp(`${baseUrl}/api/health`, { service: web });
        // TROUPE_E2E_GREP runs only the browser tests whose title matches.
        const grep = process.env.TROUPE_E2E_GREP ? ["--grep", process.env.TROUPE_E2E_GREP] : [];
        const code = await run("npx", ["playwright", "test", "--config", "e2e/playwright.config.ts", ...grep], {
          cwd: root,
          env: { ...env, TROUPE_BASE_URL: baseUrl, TROUPE_E2E_REPORT: join(reports, "e2e.json") },
          label: "playwright: browser tests in Chromium",
        });
        record("e2e", code);
      }
    }
  } catch (e) {
    console.error(`error: ${e instanceof Error ? e.message : e}`);
    results.push({ suite: "setup", code: 1, passed: 0, failed: 1, skipped: 0 });
  } finally {
    if (runner) await runner.stop();
    if (web) await web.stop();
    await services.stop();
  }

  console.log("\n=== summary ===");
  for (const r of results) {
    console.log(`${r.suite.padEnd(8)} ${r.code === 0 ? "ok  " : "FAIL"}  ${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped`);
  }
  for (const r of results) {
    for (const name of r.failedNames ?? []) console.log(`  failed: ${r.suite}: ${name}`);
  }
  const total = (k) => results.reduce((a, r) => a + r[k], 0);
  console.log(`${total("passed")} passed, ${total("failed")} failed, ${total("skipped")} skipped`);
  process.exit(results.length > 0 && results.every((r) => r.code === 0) ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
