import { expect, test } from "@playwright/test";
import { composeEchoExperiment } from "./compose";

/**
 * Issue 18 in the composer: the PPO family's entropy bonus and value normalisation. A bonus above 1 is refused
 * beside its field; both land in the exported spec; the entropy bonus stays offered for grpo (default 0) and
 * value normalisation, a critic setting, is not.
 */

const suffix = Date.now().toString(36);

test("composer: ppo's entropy bonus and value normalisation, a bad bonus refused beside its field", async ({ page, request }) => {
  await composeEchoExperiment(page, request, "ppo", suffix);

  await page.getByLabel("Algorithm", { exact: true }).selectOption("ppo");
  const bonus = page.getByLabel("Entropy bonus", { exact: true });
  await expect(bonus).toHaveAttribute("placeholder", "0"); // off unless asked, as in TRL, verl and OpenRLHF
  await bonus.fill("2");
  await expect(page.getByTestId("issue-algorithm.entropyCoef")).toBeVisible();
  await bonus.fill("0.02");
  await expect(page.getByTestId("issue-algorithm.entropyCoef")).toHaveCount(0);
  const norm = page.getByLabel("Value normalisation", { exact: true });
  await expect(norm).toBeChecked();
  await norm.uncheck();
  await expect(page.getByTestId("spec-valid")).toBeVisible();
  await page.getByTestId("spec-export-open").click();
  await expect(page.getByTestId("spec-export-text")).toHaveValue(/entropyCoef: 0.02/);
  await expect(page.getByTestId("spec-export-text")).toHaveValue(/valueNorm: false/);

  // grpo: the bonus is still offered (its default 0), value normalisation (a critic setting) is not.
  await page.getByLabel("Algorithm", { exact: true }).selectOption("grpo");
  await expect(page.getByLabel("Entropy bonus", { exact: true })).toHaveAttribute("placeholder", "0");
  await expect(page.getByLabel("Value normalisation", { exact: true })).toHaveCount(0);
  // ...and the ppo-only valueNorm: false set above left with it: the spec is valid, not refused at a hidden field.
  await expect(page.getByTestId("spec-valid")).toBeVisible();
  await expect(page.getByTestId("spec-export-text")).not.toHaveValue(/valueNorm/); // the export panel opened above
});
