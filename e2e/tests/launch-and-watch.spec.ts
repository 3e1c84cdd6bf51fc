import { expect, test, type Page } from "@playwright/test";

/** Launches the seeded demo from the dashboard with a step override; returns the run page's id. */
async function launchDemo(page: Page, steps: number): Promise<string> {
  await page.goto("/");
  const card = page.getByTestId("experiment-card").first();
  await expect(card).toBeVisible();
  await card.getByTestId("launch-open").click();
  await card.getByTestId("launch-steps").fill(String(steps));
  await card.getByTestId("launch-submit").click();
  await page.waitForURL(/\/runs\/[^/]+$/);
  return page.url().split("/").pop()!;
}

async function points(page: Page, chart: string): Promise<number> {
  return Number((await page.getByTestId(chart).getAttribute("data-points")) ?? "0");
}

test("launch the demo, watch the charts grow live, see it succeed", async ({ page }) => {
  await launchDemo(page, 25);
  const status = page.getByTestId("run-status");
  await expect(status).toHaveText(/queued|running/);
  // A marker on window survives only if the page is never reloaded.
  await page.evaluate(() => ((window as unknown as { __noReload: boolean }).__noReload = true));
  await expect(status).toHaveText("running", { timeout: 60_000 });

  // The reward chart gains points while the run trains, without a reload.
  await expect.poll(() => points(page, "chart-reward"), { timeout: 120_000 }).toBeGreaterThan(0);
  const first = await points(page, "chart-reward");
  await expect.poll(() => points(page, "chart-reward"), { timeout: 120_000 }).toBeGreaterThan(first);
  expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);

  await expect(status).toHaveText("succeeded", { timeout: 180_000 });
  expect(await points(page, "chart-reward")).toBe(25);
  expect(await points(page, "chart-loss")).toBe(25);
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
  await queuedPage.getByTestId("run-cancel").click();
  await expect(queuedPage.getByTestId("run-status")).toHaveText("cancelled");

  await page.bringToFront();
  expect(page.url()).toContain(runningId);
  await page.getByTestId("run-cancel").click();
  await expect(page.getByTestId("run-status")).toHaveText("cancelled", { timeout: 60_000 });
  await expect(page.getByTestId("run-cancel")).toBeDisabled();

  // The runs table on the dashboard agrees.
  await page.goto("/");
  await expect(page.getByTestId("run-row").filter({ hasText: "cancelled" })).toHaveCount(2);
});
