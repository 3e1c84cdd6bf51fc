import { expect, test, type Page } from "@playwright/test";
import { spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Elo per checkpoint (issue 31) on a run with ratings: two players, alice and bob, rated every 4 steps against
 * each other, their snapshots and the fixed opponents (simulate-run --ratings plays the metric events the
 * runtime's troupe/ratings reports). The Games section shows win/draw/loss and the Elo chart with the anchor.
 */

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const shotDir = process.env.TROUPE_E2E_SCREENSHOTS;
async function shot(page: Page, name: string) {
  if (shotDir) await page.screenshot({ path: `${shotDir}/${name}.png`, fullPage: true });
}

function simulateRatedRun(steps: number): Promise<string> {
  return new Promise((ok, fail) => {
    const child = spawn("npx", ["tsx", "apps/web/scripts/simulate-run.ts", "--steps", String(steps), "--interval-ms", "5", "--ratings"], {
      cwd: repoRoot,
      env: process.env,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("error", fail);
    child.on("exit", (code) => (code === 0 ? ok(out.split("\n")[0]!.trim()) : fail(new Error(`simulate-run exited ${code}`))));
  });
}

test("Elo per checkpoint: each actor's rating across checkpoints beside win/draw/loss, with the random anchor at 1000", async ({ page }) => {
  const runId = await simulateRatedRun(12);
  await page.goto(`/runs/${runId}`);
  const elo = page.getByTestId("elo-chart");
  await expect(elo).toBeVisible({ timeout: 60_000 });
  // In the Games section, after the outcome-rate charts.
  const games = page.locator("h3.group-title", { hasText: /^Games$/ }).locator("xpath=..");
  await expect(games.getByTestId("chart-game-win")).toBeVisible();
  await expect(games.getByTestId("elo-chart")).toBeVisible();
  // The grid leaves elo/… to this chart.
  await expect(page.getByTestId("chart-elo-rating")).toHaveCount(0);
  // Checkpoints at steps 4, 8, 12: one point per actor each.
  await expect(elo).toHaveAttribute("data-points", "6");
  const latest = elo.getByTestId("elo-latest-actor");
  await expect(latest).toHaveCount(2);
  // alice: 700 + 650 * 1 * 12/12 = 1350, ci 600 / sqrt(72 / 8) = 200, after 3 checkpoints of 24 games.
  await expect(latest.filter({ hasText: "alice" })).toHaveText("alice 1350 ± 200 at step 12 (72 games)");
  await expect(latest.filter({ hasText: "bob" })).toHaveText("bob 1090 ± 200 at step 12 (72 games)");
  await expect(elo.getByTestId("elo-latest")).toContainText("Fixed opponents: random 1000, first_move 1120");
  // Drawn: two rating lines with their bands, and the anchor's reference line labelled.
  const plot = elo.getByTestId("elo-plot");
  await expect(plot.locator(".recharts-line")).toHaveCount(2);
  await expect(plot.locator(".recharts-area")).toHaveCount(2);
  await expect(plot.locator(".recharts-reference-line")).toHaveCount(2);
  await expect(plot).toContainText("random 1000");
  await elo.scrollIntoViewIfNeeded();
  await shot(page, "elo-ratings");
});
