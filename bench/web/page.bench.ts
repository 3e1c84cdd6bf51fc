/**
 * Benchmark: the run page in Chromium, on a long run (20 series × 1,000,000 points, 100,000 episodes)
 * against a short one (20 × 1,000, 8,000 episodes) measured in the same script as the baseline.
 *
 *   TROUPE_BASE_URL=http://127.0.0.1:3000 DATABASE_URL=… REDIS_URL=… npx tsx bench/web/page.bench.ts [--points 1000000] [--repeats 5]
 *
 * Needs a running web app (`next start`, a production build) on the same database and Redis.
 * (a) interactive: navigation start → every chart drawn, then a click on a tab answered (the tab
 *     selected in a painted frame);
 *     long tasks (total blocking time) until then.
 * (b) transcript scroll: a scripted wheel scroll through the virtualised list (pages load as it goes);
 *     frame times and long tasks.
 * (c) live latency: a simulated run stores a step (apps/web/scripts/simulate-run.ts, storeEvents then
 *     the Redis stream, as the runner does) → the event reaches the page over SSE → the open chart
 *     draws it; split into the two legs so it is clear where the time goes.
 */
import { execSync, spawn } from "node:child_process";
import { loadavg } from "node:os";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createDb } from "@troupe/db";
import { createSession, SESSION_COOKIE } from "../../apps/web/src/features/auth/server/sessions";
import { chromium, type Browser, type Page } from "playwright-core";
import { seedBenchRun } from "./seed";
import { median, percentile as pct } from "./timing";

const { values } = parseArgs({
  options: {
    points: { type: "string", default: "1000000" },
    repeats: { type: "string", default: "5" },
    "live-steps": { type: "string", default: "40" },
    "live-interval-ms": { type: "string", default: "300" },
  },
});
const points = Number(values.points);
const repeats = Number(values.repeats);
const baseUrl = process.env.TROUPE_BASE_URL;
const databaseUrl = process.env.DATABASE_URL;
if (!baseUrl || !databaseUrl || !process.env.REDIS_URL) throw new Error("set TROUPE_BASE_URL, DATABASE_URL and REDIS_URL");
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

const db = createDb(databaseUrl);
// Pages need a signed-in user: a viewer made for this run of the bench, removed at the end.
const benchUser = await db.user.create({ data: { email: `bench-${Date.now()}@troupe.bench`, role: "viewer" } });
const { secret: sessionSecret } = await createSession(db, benchUser.id);
const long = await seedBenchRun(db, points);
const short = await seedBenchRun(db, 1000);
console.log(`long run ${long.runId}, short run (baseline) ${short.runId}`);
// Timings on a small machine swing with whatever else runs: the load average says how busy it was.
const load = () => loadavg().map((l) => l.toFixed(2)).join(" ");
console.log(`load average at start: ${load()}`);

const executablePath = process.env.TROUPE_CHROMIUM ?? execSync("command -v chromium || command -v chromium-browser", { shell: "/bin/sh" }).toString().trim();
const browser: Browser = await chromium.launch({
  executablePath,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
});


/** Records long tasks from the first byte on (the observer is installed before any page script). */
async function newPage(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  await page.context().addCookies([{ name: SESSION_COOKIE, value: sessionSecret, url: baseUrl! }]);
  // tsx (esbuild, keepNames) wraps named functions in the callbacks below with `__name(...)`, which
  // the page does not have.
  await page.addInitScript({ content: "window.__name = (f) => f;" });
  await page.addInitScript(() => {
    const w = window as unknown as { __longTasks: { start: number; duration: number }[] };
    w.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) w.__longTasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: "longtask", buffered: true });
  });
  return page;
}

interface LoadSample {
  chartsMs: number;
  interactiveMs: number;
  clickToFrameMs: number;
  blockingMs: number;
  charts: number;
}

/** (a) Opens the run page; times navigation start → all charts drawn → a click answered. */
async function loadOnce(runId: string): Promise<LoadSample> {
  const page = await newPage();
  await page.goto(`${baseUrl}/runs/${runId}`, { waitUntil: "commit" });
  // Every chart of the run's metrics has points (the reward chart's band folds reward/std into it).
  const handle = await page.waitForFunction(
    () => {
      const charts = [...document.querySelectorAll<HTMLElement>(".charts [data-points]")];
      const drawn = charts.filter((c) => Number(c.dataset.points) > 0 && c.querySelector("[data-drawn]"));
      return charts.length >= 9 && drawn.length === charts.length ? { at: performance.now(), charts: charts.length } : null;
    },
    undefined,
    { polling: "raf", timeout: 60_000 },
  );
  const { at, charts } = (await handle.jsonValue())!;
  // The page answers: a click on the Logs tab, timed until the tab shows as selected in a painted
  // frame (a click before hydration would paint a frame without doing anything).
  const clickToFrameMs = await page.evaluate(
    () =>
      new Promise<number>((done) => {
        const start = performance.now();
        const tab = document.querySelector<HTMLButtonElement>("[data-testid=tab-logs]")!;
        tab.click();
        const check = () => {
          if (tab.getAttribute("aria-selected") === "true") setTimeout(() => done(performance.now() - start), 0);
          else requestAnimationFrame(check);
        };
        requestAnimationFrame(check);
      }),
  );
  const blockingMs = await page.evaluate(
    (until) =>
      (window as unknown as { __longTasks: { start: number; duration: number }[] }).__longTasks
        .filter((t) => t.start < until)
        .reduce((n, t) => n + Math.max(0, t.duration - 50), 0),
    at,
  );
  await page.close();
  return { chartsMs: at, interactiveMs: at + clickToFrameMs, clickToFrameMs, blockingMs, charts };
}

interface ScrollSample {
  frames: number;
  p50: number;
  p95: number;
  max: number;
  over50: number;
  longTasks: number;
  rowsLoaded: number;
  scrolledRows: number;
}

/** (b) Scrolls the transcript list with the wheel (60 notches of 600 px, ~60 ms apart) and records frames. */
async function scrollOnce(runId: string): Promise<ScrollSample> {
  const page = await newPage();
  await page.goto(`${baseUrl}/runs/${runId}?tab=transcripts`);
  const list = page.getByTestId("transcript-list");
  await list.locator("[data-testid=transcript-row]").first().waitFor();
  const box = (await list.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __stop: boolean; __tasksFrom: number };
    w.__frames = [];
    w.__stop = false;
    w.__tasksFrom = performance.now();
    let last = performance.now();
    const tick = (t: number) => {
      w.__frames.push(t - last);
      last = t;
      if (!w.__stop) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  for (let i = 0; i < 60; i++) {
    await page.mouse.wheel(0, 600);
    await page.waitForTimeout(60);
  }
  await page.waitForTimeout(300);
  const r = await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __stop: boolean; __tasksFrom: number; __longTasks: { start: number }[] };
    w.__stop = true;
    const el = document.querySelector<HTMLElement>("[data-testid=transcript-list]")!;
    return {
      frames: w.__frames.slice(1),
      longTasks: w.__longTasks.filter((t) => t.start >= w.__tasksFrom).length,
      // Transcripts loaded (the list's rows also hold a header per GRPO group).
      rowsLoaded: Number(document.querySelector<HTMLElement>("[data-testid=transcripts]")!.dataset.episodes),
      scrollTop: el.scrollTop,
    };
  });
  await page.close();
  return {
    frames: r.frames.length,
    p50: pct(r.frames, 0.5),
    p95: pct(r.frames, 0.95),
    max: Math.max(...r.frames),
    over50: r.frames.filter((f) => f > 50).length,
    longTasks: r.longTasks,
    rowsLoaded: r.rowsLoaded,
    scrolledRows: Math.round(r.scrollTop / 54),
  };
}

/** (c) Plays a run live into the open page; per step: stored → SSE message → chart drawn. */
async function liveLatency(): Promise<{ toSse: number[]; toChart: number[]; sseToChart: number[] }> {
  const page = await newPage();
  await page.addInitScript(() => {
    const w = window as unknown as { __stored: Record<number, number>; __arrived: Record<number, number>; __drawn: [number, number][] };
    w.__stored = {};
    w.__arrived = {};
    w.__drawn = [];
    const Original = window.EventSource;
    window.EventSource = class extends Original {
      constructor(url: string | URL, init?: EventSourceInit) {
        super(url, init);
        this.addEventListener("message", (m) => {
          const e = JSON.parse((m as MessageEvent<string>).data) as { type: string; step?: number; ts: number };
          if (e.type === "metric" && e.step !== undefined) {
            w.__stored[e.step] = e.ts;
            w.__arrived[e.step] = Date.now();
          }
        });
      }
    } as typeof EventSource;
    new MutationObserver(() => {
      const n = Number(document.querySelector("[data-testid=chart-reward]")?.getAttribute("data-points") ?? 0);
      if (n > (w.__drawn.at(-1)?.[0] ?? 0)) w.__drawn.push([n, Date.now()]);
    }).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-points"], childList: true });
  });
  const child = spawn("npx", ["tsx", "apps/web/scripts/simulate-run.ts", "--steps", values["live-steps"]!, "--interval-ms", values["live-interval-ms"]!], {
    cwd: repoRoot,
    env: process.env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const done = new Promise<void>((ok, fail) => child.on("exit", (code) => (code === 0 ? ok() : fail(new Error(`simulate-run exited ${code}`)))));
  const runId = await new Promise<string>((ok) => {
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes("\n")) ok(out.split("\n")[0]!.trim());
    });
  });
  await page.goto(`${baseUrl}/runs/${runId}`);
  await done;
  const steps = Number(values["live-steps"]);
  await page.waitForFunction((n) => Number(document.querySelector("[data-testid=chart-reward]")?.getAttribute("data-points")) === n, steps, { timeout: 30_000 });
  const { stored, arrived, drawn } = await page.evaluate(() => {
    const w = window as unknown as { __stored: Record<number, number>; __arrived: Record<number, number>; __drawn: [number, number][] };
    return { stored: w.__stored, arrived: w.__arrived, drawn: w.__drawn };
  });
  await page.close();
  // Step k is on the chart when it draws k points (steps 1..k, one actor); steps backfilled at page
  // load (before the stream was open) are left out.
  const live = drawn.filter(([n]) => stored[n] !== undefined && arrived[n] !== undefined);
  return {
    toSse: live.map(([n]) => arrived[n]! - stored[n]!),
    toChart: live.map(([n, at]) => at - stored[n]!),
    sseToChart: live.map(([n, at]) => at - arrived[n]!),
  };
}

const results: Record<string, { load: LoadSample[]; scroll: ScrollSample[] }> = {};
for (const [label, run] of [
  ["short (baseline)", short],
  ["long", long],
] as const) {
  await loadOnce(run.runId); // warm: compiled routes, plans cached, pages in shared buffers
  const load: LoadSample[] = [];
  const scroll: ScrollSample[] = [];
  for (let i = 0; i < repeats; i++) load.push(await loadOnce(run.runId));
  for (let i = 0; i < Math.max(2, Math.ceil(repeats / 2)); i++) scroll.push(await scrollOnce(run.runId));
  results[label] = { load, scroll };
  process.stderr.write(`${label}: done\n`);
}
const latency = await liveLatency();
await browser.close();
await db.user.delete({ where: { id: benchUser.id } });
await db.$disconnect();

const base = results["short (baseline)"]!;
const longRes = results.long!;
console.log(`\n(a) run page, median of ${repeats} loads (ms since navigation start)\n`);
console.log("| run | charts | all charts drawn | + click answered (interactive) | total blocking time | long ÷ short |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
for (const [label, r] of Object.entries(results)) {
  const interactive = median(r.load.map((s) => s.interactiveMs));
  console.log(
    `| ${label} | ${r.load[0]!.charts} | ${median(r.load.map((s) => s.chartsMs)).toFixed(0)} | ${interactive.toFixed(0)} | ${median(r.load.map((s) => s.blockingMs)).toFixed(0)} | ${(interactive / median(base.load.map((s) => s.interactiveMs))).toFixed(2)}× |`,
  );
}
for (const [label, r] of Object.entries(results)) {
  const sorted = r.load.map((s) => Math.round(s.interactiveMs)).sort((x, y) => x - y);
  console.log(`${label}: interactive, every load (ms, sorted): ${sorted.join(" ")}`);
}
console.log(`\n(b) transcript list, scripted wheel scroll (60 × 600 px), median over runs\n`);
console.log("| run | frames | frame p50 ms | p95 ms | max ms | frames > 50 ms | long tasks | rows loaded | rows scrolled |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const [label, r] of Object.entries(results)) {
  const m = (f: (s: ScrollSample) => number) => median(r.scroll.map(f));
  console.log(`| ${label} | ${m((s) => s.frames)} | ${m((s) => s.p50).toFixed(1)} | ${m((s) => s.p95).toFixed(1)} | ${m((s) => s.max).toFixed(1)} | ${m((s) => s.over50)} | ${m((s) => s.longTasks)} | ${m((s) => s.rowsLoaded)} | ${m((s) => s.scrolledRows)} |`);
}
const fmt = (xs: number[]) => `${pct(xs, 0.5)} / ${pct(xs, 0.9)} / ${Math.max(...xs)}`;
console.log(`\n(c) live latency over ${latency.toChart.length} live steps (ms, median / p90 / max)\n`);
console.log("| leg | ms |");
console.log("| --- | ---: |");
console.log(`| stored → SSE message in the page | ${fmt(latency.toSse)} |`);
console.log(`| SSE message → chart drawn | ${fmt(latency.sseToChart)} |`);
console.log(`| stored → chart drawn (goal p90 ≤ 250) | ${fmt(latency.toChart)} |`);
console.log(`load average at end: ${load()}`);
console.log(`\nlong-run page interactive vs short: ${(median(longRes.load.map((s) => s.interactiveMs)) / median(base.load.map((s) => s.interactiveMs))).toFixed(2)}×`);
