import { expect, test, type Page } from "@playwright/test";
import { simulateRun } from "./runs";

const points = async (page: Page, testId: string) => Number((await page.getByTestId(testId).getAttribute("data-points")) ?? "0");

/** Drags across the middle of a chart's plot, as a person selecting a step range. */
async function dragAcross(page: Page, testId: string, fromFraction: number, toFraction: number) {
  // The mouse only reaches what is on screen: a chart below the fold is scrolled to first.
  await page.getByTestId(testId).scrollIntoViewIfNeeded();
  const box = (await page.getByTestId(testId).locator(".u-over").boundingBox())!;
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width * fromFraction, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * ((fromFraction + toFraction) / 2), y, { steps: 5 });
  await page.mouse.move(box.x + box.width * toFraction, y, { steps: 5 });
  await page.mouse.up();
}

test("watch: zoom a chart, then open the transcripts and filter them", async ({ page }) => {
  const pageErrors: string[] = [];
  page.on("pageerror", (e) => pageErrors.push(e.message));
  const sim = await simulateRun(60, 10);
  await sim.done;
  const asked: string[] = [];
  page.on("request", (r) => r.url().includes("/api/trpc/") && asked.push(new URL(r.url()).pathname.slice("/api/trpc/".length)));
  await page.goto(`/runs/${sim.id}`);
  await expect(page.getByTestId("run-status")).toHaveText("succeeded");
  await expect.poll(() => points(page, "chart-reward")).toBe(60);
  await expect(page.getByTestId("chart-kl")).toBeVisible();
  // The server rendered the page with the run and its charts' series: the browser did not ask again.
  expect(asked.join(",")).not.toMatch(/run\.(byId|metricNames|metrics)\b/);

  await dragAcross(page, "chart-reward", 0.3, 0.7);
  const reward = page.getByTestId("chart-reward");
  await expect(reward).toHaveAttribute("data-zoom", /^\d+-\d+$/);
  const [from, to] = (await reward.getAttribute("data-zoom"))!.split("-").map(Number) as [number, number];
  expect(to).toBeGreaterThan(from);
  // Every chart shows the zoomed range (fetched again from the server for that range).
  await expect.poll(() => points(page, "chart-reward")).toBe(to - from + 1);
  await expect.poll(() => points(page, "chart-loss")).toBe(to - from + 1);
  // The zoom (and the chart options) live in the URL: a reload, or the link sent to a colleague,
  // opens the same view.
  await page.getByTestId("chart-log").check();
  // Drawn again on a log scale (a chart that failed to draw would not say so).
  await expect(page.getByTestId("chart-reward").locator("[data-drawn]")).toHaveCount(1);
  await expect(page).toHaveURL(new RegExp(`[?&]from=${from}&to=${to}`));
  await expect(page).toHaveURL(/[?&]log=1/);
  await page.reload();
  await expect(page.getByTestId("chart-reward")).toHaveAttribute("data-zoom", `${from}-${to}`);
  await expect(page.getByTestId("chart-log")).toBeChecked();
  await expect.poll(() => points(page, "chart-reward")).toBe(to - from + 1);
  await page.getByTestId("chart-log").uncheck();
  // "Ignore outliers" is part of the view too, and the charts draw with it.
  await page.getByTestId("chart-outliers").check();
  await expect(page).toHaveURL(/[?&]outliers=ignore/);
  await expect(page.getByTestId("chart-reward").locator("[data-drawn]")).toHaveCount(1);
  await page.getByTestId("chart-outliers").uncheck();
  await page.getByTestId("zoom-reset").click();
  await expect(page).not.toHaveURL(/from=/);
  await expect(reward).not.toHaveAttribute("data-zoom", /.*/);
  await expect.poll(() => points(page, "chart-reward")).toBe(60);
  // A double click on a zoomed chart zooms back out too, as in W&B.
  await dragAcross(page, "chart-loss", 0.2, 0.5);
  await expect(page).toHaveURL(/[?&]from=\d+&to=\d+/);
  await page.getByTestId("chart-loss").locator(".u-over").dblclick();
  await expect(page).not.toHaveURL(/from=/);
  await expect.poll(() => points(page, "chart-reward")).toBe(60);

  await page.screenshot({ path: test.info().outputPath("run-charts.png"), fullPage: true });
  const plotWidth = (await page.getByTestId("chart-reward").locator(".u-over").boundingBox())!.width;
  // Requests for series so far (tRPC may batch several procedures into one path: "a,b").
  const seriesAsked = () => asked.flatMap((p) => p.split(",")).filter((p) => p === "run.metrics").length;
  await expect.poll(seriesAsked).toBeGreaterThan(0); // the zooms
  const metricsAskedBefore = seriesAsked();

  await page.getByTestId("tab-transcripts").click();
  const rows = page.getByTestId("transcript-row");
  const headers = page.getByTestId("transcript-group");
  await expect(page.getByTestId("transcripts-count")).toHaveText("100+ transcripts");
  // Whole GRPO groups, newest step first: a header row per group, then its samples, each row showing
  // the conversation's shape (speakers in order, the prompt by its role) rather than only its last turn.
  await expect(headers.first()).toHaveAttribute("data-group", "60/echo/0");
  await expect(headers.first().getByTestId("group-sample")).toHaveCount(2);
  await expect(rows.first().getByTestId("transcript-shape")).toHaveText("2 turns · user → student");
  // The prompt's dataset is not an actor to filter by.
  await expect(page.getByTestId("filter-actor").locator("option")).toHaveText(["any", "student", "judge"]);
  await page.getByTestId("filter-actor").selectOption("judge");
  await expect(page.getByTestId("transcripts-count")).toHaveText("1 transcripts");
  await expect(rows).toHaveCount(1);
  await expect(rows.first().getByTestId("transcript-shape")).toHaveText("2 turns · user → judge");
  // The group's header shows every sample with its reward and advantage, the one the filter left out too.
  await expect(headers).toHaveCount(1);
  await expect(headers.first()).toHaveAttribute("data-group", "1/echo/1");
  await expect(headers.first().getByTestId("group-stats")).toHaveText("reward 0.5 ± 0.707 (2 samples)");
  await expect(headers.first().getByTestId("group-sample")).toHaveText(["#0 0 adv -0.707", "#1 1 adv +0.707"]);
  await rows.first().click();
  const groupTable = page.getByTestId("transcript").getByTestId("transcript-group-table");
  await expect(groupTable.getByTestId("group-stats")).toHaveText("reward mean 0.5 ± 0.707 over 2 samples");
  await expect(groupTable.getByTestId("group-table-sample")).toHaveText(["#00-0.707", "#11+0.707"]);
  await expect(groupTable.locator("tr[aria-current=true]")).toHaveText("#00-0.707");
  // The prompt is labelled by its role, its dataset beside it.
  const prompt = page.getByTestId("transcript").getByTestId("transcript-turn").first();
  await expect(prompt.getByTestId("turn-speaker")).toHaveText("user");
  await expect(prompt.getByTestId("turn-source")).toHaveText("prompt · dataset letters");
  const turn = page.getByTestId("transcript-turn").filter({ hasText: "judge" });
  // The model's HTML is shown as its text, and nothing of it ran.
  await expect(turn).toContainText('<script>window.__xss = 1</script><img src=x onerror="window.__xss = 1">');
  expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
  await expect(page.locator("[data-testid=transcripts] img")).toHaveCount(0);

  await page.getByTestId("filter-actor").selectOption("");
  // "reward 1 · adv 0" explained: its group all scored 1.
  await page.getByTestId("filter-group").fill("2");
  await expect(page.getByTestId("transcripts-count")).toHaveText("2 transcripts");
  await expect(rows.first()).toContainText("reward 1 · adv 0");
  await expect(headers).toHaveCount(1);
  await expect(headers.first().getByTestId("group-stats")).toHaveText("reward 1 ± 0 (2 samples) · all equal: adv 0");
  await expect(headers.first().getByTestId("group-sample")).toHaveText(["#0 1 adv 0", "#1 1 adv 0"]);
  await page.getByTestId("filter-group").fill("");
  // The simulator asks for letter b at 12 of its 124 episodes (both samples of group 0 at steps 1, 11, …, 51).
  await page.getByTestId("filter-text").fill("say b:");
  await expect(page.getByTestId("transcripts-count")).toHaveText("12 transcripts");
  await expect(rows).toHaveCount(12);
  await rows.nth(3).click();
  await expect(page.getByTestId("transcript").getByTestId("transcript-turn").first()).toHaveText(/say b:/);
  await page.screenshot({ path: test.info().outputPath("run-transcripts.png"), fullPage: true });

  // Back on the charts: drawn at the width they had. Hidden behind the other tab they were not
  // resized to nothing, nor their series asked for again.
  await page.getByTestId("tab-charts").click();
  await expect(page.getByTestId("chart-reward").locator(".u-over")).toBeVisible();
  expect((await page.getByTestId("chart-reward").locator(".u-over").boundingBox())!.width).toBe(plotWidth);
  expect(seriesAsked()).toBe(metricsAskedBefore);

  // The frozen spec, as YAML (what `npx troupe run` takes) or JSON.
  await page.getByTestId("tab-spec").click();
  await expect(page.getByTestId("run-spec")).toContainText(/^specVersion: 1\nname: /);
  await page.getByTestId("run-spec-format").selectOption("json");
  await expect(page.getByTestId("run-spec")).toContainText('"specVersion": 1,');
  expect(pageErrors).toEqual([]);
});

test("watch: compare two runs and see the spec difference", async ({ page }) => {
  const a = await simulateRun(20, 10);
  const b = await simulateRun(30, 10);
  await Promise.all([a.done, b.done]);
  await page.goto(`/runs?q=simulated`);
  const nameOfA = (await page.locator(`[data-run-id="${a.id}"]`).getByTestId("run-name").textContent())!.trim();
  await page.locator(`[data-run-id="${a.id}"] [data-testid=run-select]`).check();
  await page.locator(`[data-run-id="${b.id}"] [data-testid=run-select]`).check();
  await page.getByTestId("runs-compare").click();
  await page.waitForURL(/\/compare\?ids=/);
  const diff = page.getByTestId("spec-diff");
  await expect(diff.locator('[data-path="trainer.steps"]')).toContainText("20");
  await expect(diff.locator('[data-path="trainer.steps"]')).toContainText("30");
  const differing = await diff.getByTestId("spec-diff-row").count();
  await page.getByTestId("spec-diff-only").uncheck();
  await expect.poll(() => diff.getByTestId("spec-diff-row").count()).toBeGreaterThan(differing);
  await expect.poll(() => points(page, "compare-chart-reward")).toBe(50);
  // A click on a run in a chart's legend hides its line (20 points), a second click shows it again.
  // (Both runs have the demo's spec name; the legend names each by its own generated name.)
  const legendItem = page.getByTestId("compare-chart-reward").getByTestId("legend-item").filter({ hasText: nameOfA });
  await legendItem.click();
  await expect(legendItem).toHaveAttribute("aria-pressed", "false");
  await expect.poll(() => points(page, "compare-chart-reward")).toBe(30);
  await legendItem.click();
  await expect.poll(() => points(page, "compare-chart-reward")).toBe(50);
  await page.getByTestId("compare-row").fill("7");
  await expect(page.getByTestId("compare-transcripts").getByTestId("transcript")).toHaveCount(2);
  await page.screenshot({ path: test.info().outputPath("compare.png"), fullPage: true });
});

test("watch: live points reach an open chart quickly (measured)", async ({ page }) => {
  // Record, in the page, when each metric event arrives on the SSE connection (with the event's own
  // timestamp, taken by the simulator right before it stores the step) and when the reward chart's
  // point count changes.
  await page.addInitScript(() => {
    const w = window as unknown as { __metricTs: Record<number, number>; __drawn: [number, number][] };
    w.__metricTs = {};
    w.__drawn = [];
    const Original = window.EventSource;
    window.EventSource = class extends Original {
      constructor(url: string | URL, init?: EventSourceInit) {
        super(url, init);
        this.addEventListener("message", (m) => {
          const e = JSON.parse((m as MessageEvent<string>).data) as { type: string; step?: number; ts: number };
          if (e.type === "metric" && e.step !== undefined) w.__metricTs[e.step] = e.ts;
        });
      }
    } as typeof EventSource;
    new MutationObserver(() => {
      const n = Number(document.querySelector("[data-testid=chart-reward]")?.getAttribute("data-points") ?? 0);
      if (n > (w.__drawn.at(-1)?.[0] ?? 0)) w.__drawn.push([n, Date.now()]);
    }).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-points"], childList: true });
  });
  const sim = await simulateRun(25, 400);
  await page.goto(`/runs/${sim.id}`);
  await sim.done;
  await expect(page.getByTestId("run-status")).toHaveText("succeeded");
  await expect.poll(() => points(page, "chart-reward")).toBe(25);
  const { metricTs, drawn } = await page.evaluate(() => {
    const w = window as unknown as { __metricTs: Record<number, number>; __drawn: [number, number][] };
    return { metricTs: w.__metricTs, drawn: w.__drawn };
  });
  // Step k is on the chart when it draws k points (steps 1..k, one actor).
  const latencies = drawn.filter(([n]) => metricTs[n] !== undefined).map(([n, at]) => at - metricTs[n]!);
  expect(latencies.length).toBeGreaterThan(5);
  latencies.sort((x, y) => x - y);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
  console.log(`live latency (store → chart), ${latencies.length} steps: median ${pct(0.5)} ms, p90 ${pct(0.9)} ms, max ${latencies.at(-1)} ms`);
  test.info().annotations.push({ type: "live-latency-ms", description: JSON.stringify({ median: pct(0.5), p90: pct(0.9), max: latencies.at(-1) }) });
});
