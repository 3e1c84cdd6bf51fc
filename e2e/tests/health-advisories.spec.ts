import { DEMO_SPEC_INPUT } from "@troupe/contracts";
import { expect, test } from "@playwright/test";
import { launchSpec, shot } from "./runs";

/**
 * Health advisories (issue 31) end to end: a real run of the tiny demo whose reward counts for nothing
 * (weight 0), so every GRPO group scores alike and the runtime raises "GRPO groups with no reward spread".
 * The run page shows it with its evidence and a link to the transcripts of its steps; the runs table
 * shows a badge; the REST endpoint lists it.
 */

const flatRewardSpec = (name: string) => ({
  ...DEMO_SPEC_INPUT,
  name,
  environments: DEMO_SPEC_INPUT.environments.map((e) => ({ ...e, rewards: e.rewards?.map((r) => ({ ...r, weight: 0 })) })),
  algorithm: { name: "grpo", groupSize: 4 },
  trainer: { steps: 7, promptsPerStep: 2, episodesPerStep: 8, device: "cpu", cpuThreads: 1 },
});

test("health advisories: shown on the run page with evidence, linked to the transcripts, badged in the runs table", async ({ page, request }) => {
  const name = `flat reward ${Date.now()}`;
  const runId = await launchSpec(request, flatRewardSpec(name));

  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId("run-status")).toHaveText("succeeded", { timeout: 240_000 });
  const item = page.locator('[data-testid="advisory"][data-kind="zero_variance_groups"]').first();
  await expect(item).toBeVisible({ timeout: 15_000 });
  await expect(item).toContainText("GRPO groups with no reward spread");
  await expect(item).toContainText("student");
  await expect(item.getByTestId("advisory-summary")).toContainText(/\d+ of \d+ recorded GRPO groups \(100%\) had every sample score the same reward/);
  await expect(item).toContainText("dynamicSampling");
  await item.scrollIntoViewIfNeeded();
  await shot(page, "advisory-panel");

  // The link opens the Transcripts tab filtered to the advisory's steps (and actor).
  const link = item.getByTestId("advisory-transcripts");
  const text = (await link.textContent()) ?? "";
  const [, from, to] = /steps (\d+)–(\d+)/.exec(text) ?? [];
  expect(Number(to)).toBeGreaterThanOrEqual(Number(from));
  await link.click();
  await expect(page.getByTestId("transcripts")).toBeVisible();
  await expect(page.getByTestId("filter-step-range")).toContainText(`steps ${from}–${to}`);
  await expect(page.getByTestId("transcript-row").first()).toBeVisible();
  // Group headers carry `step/environment/group`.
  const steps = await page.getByTestId("transcript-group").evaluateAll((els) => els.map((e) => Number((e.getAttribute("data-group") ?? "").split("/")[0])));
  expect(steps.length).toBeGreaterThan(0);
  for (const s of steps) expect(s >= Number(from) && s <= Number(to), `step ${s} in ${from}-${to}`).toBe(true);
  // Agents x turns: each turn of the open transcript carries its index and its speaker's reward and advantage.
  await page.getByTestId("transcript-row").first().click();
  const answer = page.locator('[data-testid="transcript-turn"][data-role="assistant"]').first();
  await expect(answer.getByTestId("turn-index")).toHaveText("turn 0");
  await expect(answer.getByTestId("turn-reward")).toHaveText(/^reward -?[\d.e+-]+$/);
  await expect(answer.getByTestId("turn-advantage")).toHaveText(/^adv -?[\d.e+-]+$/);
  await shot(page, "advisory-transcripts");

  // The runs table: a badge with the count and the worst severity.
  await page.goto(`/runs?q=${runId}`);
  const badge = page.locator(`[data-testid="run-row"][data-run-id="${runId}"]`).getByTestId("advisory-badge");
  await expect(badge).toBeVisible();
  await expect(badge).toHaveAttribute("data-severity", "warning");
  await expect(badge).toHaveAttribute("title", /GRPO groups with no reward spread/);
});
