import { expect, test } from "@playwright/test";
import { composeEchoExperiment } from "./compose";

/**
 * Issue 15 in the composer: the sampler correction (truncated importance sampling, its cap refused below 1
 * beside the field) and asynchronous rollouts (max staleness), then the run launched with both trains.
 */

const suffix = Date.now().toString(36);

test("composer: async rollouts and TIS, a bad cap refused beside its field, the run trains", async ({ page, request }) => {
  await composeEchoExperiment(page, request, "async", suffix);
  await page.getByLabel("CPU threads", { exact: true }).fill("1");
  await page.getByLabel("Prompts per step", { exact: true }).fill("2");
  await page.getByLabel("Group size", { exact: true }).fill("4");
  await page.getByLabel("Steps", { exact: true }).fill("4");

  await page.getByLabel("Sampler correction", { exact: true }).selectOption("tis");
  await page.getByLabel("TIS cap", { exact: true }).fill("0.5");
  await expect(page.getByTestId("issue-algorithm.importanceCorrection.cap")).toContainText("at least 1");
  await page.getByLabel("TIS cap", { exact: true }).fill("3");
  await expect(page.getByTestId("issue-algorithm.importanceCorrection.cap")).toHaveCount(0);

  await page.getByLabel("Asynchronous rollouts", { exact: true }).selectOption("on");
  await page.getByLabel("Max staleness", { exact: true }).fill("1");
  await expect(page.getByTestId("spec-valid")).toBeVisible();
  await page.getByTestId("spec-export-open").click();
  await expect(page.getByTestId("spec-export-text")).toHaveValue(/maxStaleness: 1/);
  await expect(page.getByTestId("spec-export-text")).toHaveValue(/kind: tis\s+cap: 3/);

  await page.getByTestId("compose-launch").click();
  await page.waitForURL(/\/runs\/[^/]+$/);
  await expect(page.getByTestId("run-status")).toHaveText("succeeded", { timeout: 180_000 });
});
