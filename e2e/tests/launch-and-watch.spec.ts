import { expect, test, type Page } from "@playwright/test";
import { launchDemo } from "./demo";

async function points(page: Page, chart: string): Promise<number> {
  return Number((await page.getByTestId(chart).getAttribute("data-points")) ?? "0");
}

test("launch the demo, watch the charts grow live, see it succeed", async ({ page }) => {
  const steps = 60;
  await launchDemo(page, steps);
  const status = page.getByTestId("run-status");
  await expect(status).toHaveText(/queued|running/);
  // Record every value the reward chart's point count takes, from inside the page; a marker on
  // window survives only if the page is never reloaded.
  await page.evaluate(() => {
    const w = window as unknown as { __noReload: boolean; __rewardPoints: number[] };
    w.__noReload = true;
    w.__rewardPoints = [];
    const sample = () => {
      const n = Number(document.querySelector('[data-testid="chart-reward"]')?.getAttribute("data-points") ?? "0");
      if (w.__rewardPoints[w.__rewardPoints.length - 1] !== n) w.__rewardPoints.push(n);
    };
    sample();
    setInterval(sample, 50);
  });
  await expect(status).toHaveText("running", { timeout: 60_000 });
  await expect(status).toHaveText("succeeded", { timeout: 180_000 });
  // The header catches up with the stored row (finish time) without a reload.
  await expect(page.getByTestId("run-finished")).toHaveText(/finished\s*\d/, { timeout: 15_000 });

  const seen = await page.evaluate(() => (window as unknown as { __rewardPoints: number[] }).__rewardPoints);
  // The chart grew in several live updates while the run trained (not in one jump at the end).
  expect(seen.filter((n) => n > 0 && n < steps).length).toBeGreaterThanOrEqual(2);
  expect(seen).toEqual([...seen].sort((a, b) => a - b));
  expect(await points(page, "chart-reward")).toBe(steps);
  expect(await points(page, "chart-loss")).toBe(steps);
  expect(await points(page, "chart-memory")).toBeGreaterThan(0);
  expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
});

test("cancel a queued run and a running run", async ({ page, context }) => {
  // The runner runs one job at a time here, so the second launch waits in the queue.
  const runningId = await launchDemo(page, 100000);
  await expect(page.getByTestId("run-status")).toHaveText("running", { timeout: 60_000 });

  const queuedPage = await context.newPage();
  await launchDemo(queuedPage, 100000);
  await expect(queuedPage.getByTestId("run-status")).toHaveText("queued");
  // It says why it waits: the one runner is busy with the first run.
  await expect(queuedPage.getByTestId("run-waiting-reason")).toContainText(/every runner that can run it is busy \(\S+ runs 1 of 1\)/);
  await queuedPage.getByTestId("run-cancel").click();
  await expect(queuedPage.getByTestId("run-status")).toHaveText("cancelled");
  await expect(queuedPage.getByTestId("run-waiting-reason")).toHaveCount(0);

  await page.bringToFront();
  expect(page.url()).toContain(runningId);
  await page.getByTestId("run-cancel").click();
  await expect(page.getByTestId("run-status")).toHaveText("cancelled", { timeout: 60_000 });
  await expect(page.getByTestId("run-cancel")).toBeDisabled();

  // The runs table on the dashboard agrees.
  await page.goto("/");
  await expect(page.getByTestId("run-row").filter({ hasText: "cancelled" })).toHaveCount(2);
});

test("the dashboard's launch form names a bad GPU count at its field, and launches once it is fixed", async ({ page }) => {
  await page.goto("/");
  const card = page.getByTestId("experiment-card").first();
  await card.getByTestId("launch-open").click();
  await card.getByTestId("launch-steps").fill("2");
  await card.getByTestId("launch-gpus").fill("-2");
  await card.getByTestId("launch-submit").click();
  await expect(card.getByTestId("launch-gpus-error")).toContainText("must be at least 0");
  await expect(card.getByTestId("launch-gpus")).toHaveAttribute("aria-invalid", "true");
  await expect(page).toHaveURL(/\/$/);

  // The demo trains on the CPU: it claims no GPU.
  await card.getByTestId("launch-gpus").fill("0");
  await card.getByTestId("launch-submit").click();
  await page.waitForURL(/\/runs\/[^/]+$/);
  await expect(page.getByTestId("run-status")).toHaveText(/queued|running|succeeded/);
});
