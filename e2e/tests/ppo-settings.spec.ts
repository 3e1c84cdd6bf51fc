import { expect, test, type APIRequestContext } from "@playwright/test";

/**
 * Issue 18 in the composer: the PPO family's entropy bonus and value normalisation. A bonus above 1 is refused
 * beside its field; both land in the exported spec; the entropy bonus stays offered for grpo (default 0) and
 * value normalisation, a critic setting, is not.
 */

const suffix = Date.now().toString(36);

async function createPart(request: APIRequestContext, kind: "actor" | "environment", spec: Record<string, unknown>) {
  const response = await request.post("/api/trpc/part.create", { data: { json: { kind, spec, description: "" } } });
  expect(response.ok(), await response.text()).toBe(true);
}

test("composer: ppo's entropy bonus and value normalisation, a bad bonus refused beside its field", async ({ page, request }) => {
  const student = `ppo_student_${suffix}`;
  const env = `ppo_echo_${suffix}`;
  await createPart(request, "actor", { name: student, model: { source: "tiny", preset: "tiny-char-2l" }, training: { learningRate: 0.003 }, sampling: { maxNewTokens: 8 } });
  await createPart(request, "environment", {
    name: env,
    kind: "single_turn",
    dataset: "echo_letter",
    actors: [student],
    prompt: { field: "prompt", applyChatTemplate: false },
    rewards: [{ reward: "letter_match", weight: 1 }],
  });

  await page.goto("/designer/experiments");
  await page.getByTestId("experiment-new").click();
  await page.waitForURL(/\/designer\/experiments\/[^/]+$/);
  await page.getByLabel("Name", { exact: true }).fill(`ppo_${suffix}`);
  await page.getByLabel("Environments to add").selectOption(env);
  await page.getByTestId("add-environments").click();
  await page.getByLabel("Device", { exact: true }).selectOption("cpu");

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
