import { expect, test } from "@playwright/test";
import { typeInto } from "./compose";
import { shot } from "./runs";

/**
 * #27's `algorithm.advantage: "hierarchical"` in the designer: the Proposer–solver template, the advantage picker's
 * one line, its settings typed key by key (answers per task) and chosen (the proposer's reward), saved as the
 * contract's fields.
 */

const suffix = Date.now().toString(36);

test("hierarchical: the proposer–solver template, its settings typed key by key, saves as algorithm.hierarchical", async ({ page, request }) => {
  await page.goto("/designer/experiments");
  await page.getByTestId("template-proposer_solver").click();
  await page.waitForURL(/\/designer\/experiments\/[^/]+$/);
  const id = page.url().split("/").pop()!;
  await page.getByLabel("Name", { exact: true }).fill(`proposer_solver_${suffix}`);
  await expect(page.getByLabel("Advantage", { exact: true })).toHaveValue("hierarchical");
  await expect(page.getByLabel("Answers per task", { exact: true })).toBeVisible();
  await typeInto(page, "Answers per task", "2");
  await page.getByLabel("Proposer's reward", { exact: true }).selectOption("frontier");
  await shot(page, "hierarchical-composer");
  await page.getByTestId("compose-save").click();
  await expect(page.getByTestId("compose-status")).toHaveText("Saved");

  const saved = await request.get(`/api/trpc/experiment.byId?input=${encodeURIComponent(JSON.stringify({ json: { id } }))}`);
  expect(saved.ok(), await saved.text()).toBe(true);
  const spec = ((await saved.json()) as { result: { data: { json: { spec: { algorithm: unknown; environments: Record<string, unknown>[] } } } } }).result.data.json.spec;
  expect(spec.algorithm).toMatchObject({ name: "grpo", advantage: "hierarchical", hierarchical: { solverSamples: 2, proposerReward: "frontier" } });
  expect(Object.keys(spec.environments[0]?.roles as Record<string, string>).sort()).toEqual(["proposer", "solver"]);
});
