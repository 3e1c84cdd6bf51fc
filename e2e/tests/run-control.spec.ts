import { expect, test, type Page } from "@playwright/test";
import { launchDemo } from "./demo";

const rewardPoints = async (page: Page) => Number((await page.getByTestId("chart-reward").getAttribute("data-points")) ?? "0");

test("pause a running run, see the step hold, resume it, and it advances again", async ({ page }) => {
  // Far more steps than the test lets it run, so the run cannot finish before the pause lands
  // (a demo step takes ~0.2 s on an idle machine).
  await launchDemo(page, 100_000);
  const status = page.getByTestId("run-status");
  await expect(status).toHaveText("running", { timeout: 60_000 });
  await expect.poll(() => rewardPoints(page), { timeout: 60_000 }).toBeGreaterThanOrEqual(2);
  // Not applicable yet: Resume is disabled and says why.
  await expect(page.getByTestId("run-resume")).toBeDisabled();
  await expect(page.getByTestId("run-resume-wrap")).toHaveAttribute("title", /Only a paused run can be resumed/);

  await page.getByTestId("run-pause").click();
  await expect(status).toHaveText("paused", { timeout: 30_000 });
  const held = await rewardPoints(page);
  await page.waitForTimeout(2_500);
  expect(await rewardPoints(page)).toBe(held); // no step while paused
  await expect(page.getByTestId("run-pause")).toBeDisabled();
  await page.screenshot({ path: test.info().outputPath("paused.png") });

  await page.getByTestId("run-resume").click();
  await expect(status).toHaveText("running", { timeout: 30_000 });
  await expect.poll(() => rewardPoints(page), { timeout: 60_000 }).toBeGreaterThan(held + 2);
  await page.getByTestId("run-cancel").click();
  await expect(status).toHaveText("cancelled", { timeout: 60_000 });
});

test("stop after this step writes a checkpoint; resume from it continues the run", async ({ page }) => {
  await launchDemo(page, 100_000);
  const status = page.getByTestId("run-status");
  await expect(status).toHaveText("running", { timeout: 60_000 });
  await expect.poll(() => rewardPoints(page), { timeout: 60_000 }).toBeGreaterThanOrEqual(2);
  await expect(page.getByTestId("run-resume-checkpoint")).toBeDisabled();

  await page.getByTestId("run-stop").click();
  await expect(status).toHaveText("stopped", { timeout: 60_000 });
  const stoppedAt = await rewardPoints(page);
  await page.getByTestId("tab-checkpoints").click();
  const row = page.getByTestId("checkpoint-row").first();
  await expect(row).toContainText(String(stoppedAt));
  await expect(row).toContainText("student");
  await expect(row).toContainText(/KiB|MiB/);
  await expect(row).toContainText(`checkpoints/step-${stoppedAt}/student`);
  const resume = page.getByTestId("run-resume-checkpoint");
  // Enabled once the runner has settled the row (the stream reports `stopped` while the process exits).
  await expect(resume).toBeEnabled({ timeout: 30_000 });
  await expect(resume).toHaveText(`Resume from step ${stoppedAt}`);
  await page.screenshot({ path: test.info().outputPath("stopped.png") });

  const answered = page.waitForResponse((r) => r.url().includes("resumeFromCheckpoint"));
  await resume.click();
  // The page reloads on success (a new attempt), so only the status can be read here, not the body.
  expect((await answered).status()).toBe(200);
  await expect(status).toHaveText(/queued|running/, { timeout: 30_000 });
  await expect(status).toHaveText("running", { timeout: 60_000 });
  await page.getByTestId("tab-charts").click();
  await expect.poll(() => rewardPoints(page), { timeout: 60_000 }).toBeGreaterThan(stoppedAt);
  await page.getByTestId("run-cancel").click();
  await expect(status).toHaveText("cancelled", { timeout: 60_000 });
});
