import { expect, test } from "@playwright/test";
import { launchSpec } from "./runs";

/**
 * An eval-only run (`trainer.steps: 0`) of the tiny demo model: the real runner and runtime load the model,
 * evaluate the eval-only environment once and finish; the run page shows the eval results per environment.
 */
const evalOnlySpec = (name: string) => ({
  specVersion: 1,
  name,
  seed: 1234,
  actors: [
    {
      name: "student",
      model: { source: "tiny", preset: "tiny-char-2l" },
      trainable: true,
      sampling: { temperature: 1.0, maxNewTokens: 8 },
    },
  ],
  datasets: [{ name: "letters", source: { kind: "builtin", name: "echo_letter", size: 24 } }],
  rewards: [{ name: "letter_match", source: { kind: "builtin", name: "letter_match" } }],
  environments: [
    {
      name: "echo_exam",
      kind: "single_turn",
      dataset: "letters",
      actors: ["student"],
      prompt: { field: "prompt", applyChatTemplate: false },
      rewards: [{ reward: "letter_match", weight: 1 }],
      evalOnly: true,
    },
  ],
  trainer: { steps: 0, device: "cpu", cpuThreads: 1 },
});

test("an eval-only run evaluates once, succeeds, and shows eval results per environment", async ({ page, request }) => {
  const name = `eval only ${Date.now()}`;
  const runId = await launchSpec(request, evalOnlySpec(name));

  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId("run-eval-only")).toHaveText("eval only");
  await expect(page.getByTestId("run-status")).toHaveText("succeeded", { timeout: 180_000 });
  const row = page.getByTestId("eval-row-echo_exam-student");
  await expect(row).toBeVisible({ timeout: 15_000 });
  await expect(row.getByTestId("eval-samples")).toHaveText("24"); // every row of the eval-only dataset
  await expect(row.getByTestId("eval-reward")).toHaveText(/^\d/);
  await expect(page.getByTestId("eval-results")).toContainText("eval-only run");
  // Nothing trained: the loss chart (always drawn) has no point.
  await expect(page.getByTestId("chart-loss")).toHaveAttribute("data-points", "0");
});
