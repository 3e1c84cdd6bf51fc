import { expect, type Page } from "@playwright/test";

/** Launches the seeded demo from the dashboard with a step override; returns the run page's id. */
export async function launchDemo(page: Page, steps: number): Promise<string> {
  await page.goto("/");
  const card = page.getByTestId("experiment-card").first();
  await expect(card).toBeVisible();
  await card.getByTestId("launch-open").click();
  await card.getByTestId("launch-steps").fill(String(steps));
  await card.getByTestId("launch-submit").click();
  await page.waitForURL(/\/runs\/[^/]+$/);
  return page.url().split("/").pop()!;
}
