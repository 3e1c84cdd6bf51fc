import { expect, test } from "@playwright/test";
import { shot, simulateOffloadRun } from "./runs";

/**
 * The GPU timeline (issue 31) on a run with offload events: two actors taking turns on cuda:0 with
 * between-phase offload (simulate-run --offload plays the events a runner stores; no GPU exists here).
 * Per step and phase it names the resident model and the reload/offload moves with bytes and seconds.
 */

test("GPU timeline: which model was resident in each phase, and the offload moves, on a run with offload events", async ({ page }) => {
  const runId = await simulateOffloadRun(12);
  await page.goto(`/runs/${runId}`);
  const timeline = page.getByTestId("gpu-timeline");
  await expect(timeline).toBeVisible({ timeout: 30_000 });
  await expect(timeline).toContainText("steps 5–12");
  const device = timeline.locator('[data-testid="timeline-device"][data-device="cuda:0"]');
  await expect(device.getByRole("columnheader")).toHaveText(["cuda:0", "update · alice", "update · bob", "rollout"]);
  const last = device.locator('[data-testid="timeline-step"][data-step="12"]');
  const slots = last.getByTestId("timeline-slot");
  await expect(slots).toHaveCount(3);
  await expect(slots.nth(0)).toHaveAttribute("data-resident", "alice");
  await expect(slots.nth(1)).toHaveAttribute("data-resident", "bob");
  await expect(slots.nth(2)).toHaveAttribute("data-resident", "");
  await expect(slots.nth(2)).toContainText("no model");
  // bob: 18 GiB of parameters and Adam state reloaded before his update and offloaded after it.
  await expect(slots.nth(1).locator('[data-testid="timeline-move"][data-direction="reload"]')).toContainText(/▲ reload bob params\+optimizer 18(\.0)? GiB in \d\.\d\d s/);
  await expect(slots.nth(1).locator('[data-testid="timeline-move"][data-direction="offload"]')).toContainText(/▼ offload bob params\+optimizer 18(\.0)? GiB/);
  await timeline.scrollIntoViewIfNeeded();
  await shot(page, "gpu-timeline");
  // Earlier steps.
  await timeline.getByTestId("timeline-earlier").click();
  await expect(timeline).toContainText(/steps [01]–4/);
  await expect(device.locator('[data-testid="timeline-step"][data-step="1"]')).toBeVisible();
});
