import { expect, test } from "@playwright/test";
import { launchDemo } from "./demo";
import { shot } from "./runs";

test("run page: the memory estimate beside the measured peaks, per phase and actor, in a chart and a table", async ({ page }) => {
  const pageErrors: string[] = [];
  page.on("pageerror", (e) => pageErrors.push(e.message));
  // A real CPU run of the demo (tiny-char-2l), through the runner and the runtime.
  await launchDemo(page, 3);
  await expect(page.getByTestId("run-status")).toHaveText("succeeded", { timeout: 180_000 });

  const panel = page.getByTestId("memory-estimate-vs-measured");
  await panel.scrollIntoViewIfNeeded();
  const table = page.getByTestId("memory-estimate-table");
  // The rollout and the student's update on the host (a CPU run), each with a measured peak.
  await expect(table.locator("tbody tr")).toHaveCount(2);
  const rollout = table.locator("tbody tr").filter({ hasText: "rollout" });
  const update = table.locator("tbody tr").filter({ hasText: "update" });
  await expect(rollout).toContainText("cpu");
  await expect(update).toContainText("student");
  await expect(rollout.locator("td").nth(4)).toHaveText(/MiB/, { timeout: 30_000 });
  await expect(update.locator("td").nth(4)).toHaveText(/MiB/);
  await expect(update.locator("td").nth(5)).toHaveText(/^[+-]?\d+%$/);

  // Recharts draws two bars (estimate, measured) per phase.
  const chart = page.getByTestId("memory-estimate-chart-cpu");
  await expect(chart.locator(".recharts-bar-rectangle")).toHaveCount(4);

  // The estimate follows the assumed prompt length (the demo's prompts are 6 characters).
  const before = await update.locator("td").nth(3).textContent();
  await page.getByLabel("Prompt length for the estimate (tokens)").fill("6");
  await expect(update.locator("td").nth(3)).not.toHaveText(before ?? "");
  await expect(panel).toContainText("include the process itself");
  await shot(page, "memory-estimate-vs-measured");
  expect(pageErrors).toEqual([]);
});
