import { expect, test, type Page } from "@playwright/test";

/**
 * What a newcomer sees on a laptop-sized screen (1440 px): the demo card reads as text (no literal
 * backticks), and the runs table fits without sideways scrolling.
 */

const shotDir = process.env.TROUPE_E2E_SCREENSHOTS;
async function shot(page: Page, name: string) {
  if (shotDir) await page.screenshot({ path: `${shotDir}/${name}.png`, fullPage: false });
}

test.use({ viewport: { width: 1440, height: 900 } });

test("the demo card shows code as code, not backticks", async ({ page }) => {
  await page.goto("/");
  const demo = page.locator('[data-testid="experiment-card"][data-experiment-id="demo-echo-letter"]');
  await expect(demo).toBeVisible();
  await expect(demo.locator("code").first()).toHaveText("say k:");
  expect(await demo.innerText()).not.toContain("`");
  await shot(page, "dashboard-1440");
});

test("the runs table fits a 1440 px screen without sideways scrolling", async ({ page, request }) => {
  // Two runs of the demo (3 steps), so every default column has content.
  for (let i = 0; i < 2; i++) {
    const r = await request.post("/api/trpc/experiment.launch", { data: { json: { experimentId: "demo-echo-letter", overrides: { steps: 3 }, priority: 0 } } });
    expect(r.ok(), await r.text()).toBe(true);
  }
  await page.goto("/runs");
  await expect(page.getByTestId("run-row").first()).toBeVisible();
  const widths = await page.evaluate(() => {
    const box = document.querySelector(".table-scroll") as HTMLElement;
    return { boxScroll: box.scrollWidth, boxClient: box.clientWidth, page: document.documentElement.scrollWidth };
  });
  await shot(page, "runs-1440");
  expect(widths.boxScroll, JSON.stringify(widths)).toBeLessThanOrEqual(widths.boxClient);
  expect(widths.page).toBeLessThanOrEqual(1440);
  // The id under each name is the short id that search and chart legends use.
  await expect(page.getByTestId("run-row").first().locator("code")).toHaveText(/^#[a-z0-9]{5}$/);
});
