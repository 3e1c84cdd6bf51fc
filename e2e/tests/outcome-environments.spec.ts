import { expect, test } from "@playwright/test";

/**
 * #27: the majority_vote and summary environment kinds in the designer. An experiment started from the Summary
 * template opens in the composer with nothing to fix and saves with its summary environment; on the Environments
 * page a majority_vote environment is chosen with its settings (it needs no reward) and saves.
 */

const suffix = Date.now().toString(36);

test("an experiment from the summary template saves, and a majority_vote environment saves with its settings", async ({ page, request }) => {
  await page.goto("/designer/experiments");
  await page.getByTestId("template-summary").click();
  await page.waitForURL(/\/designer\/experiments\/[^/]+$/);
  const id = page.url().split("/").pop()!;
  await page.getByLabel("Name", { exact: true }).fill(`summary_${suffix}`);
  await page.getByTestId("compose-save").click();
  await expect(page.getByTestId("compose-status")).toHaveText("Saved");
  const saved = await request.get(`/api/trpc/experiment.byId?input=${encodeURIComponent(JSON.stringify({ json: { id } }))}`);
  expect(saved.ok(), await saved.text()).toBe(true);
  const spec = ((await saved.json()) as { result: { data: { json: { spec: { name: string; environments: Record<string, unknown>[] } } } } }).result.data.json.spec;
  expect(spec.name).toBe(`summary_${suffix}`);
  expect(spec.environments[0]).toMatchObject({ kind: "summary", actors: ["s1", "s2", "s3", "lead"], summary: { summariser: "lead" } });

  // The Environments page: the kind, its one-line note, its settings.
  const player = `voter_${suffix}`;
  for (const name of [`${player}_a`, `${player}_b`]) {
    const response = await request.post("/api/trpc/part.create", { data: { json: { kind: "actor", spec: { name, model: { source: "tiny" } }, description: "" } } });
    expect(response.ok(), await response.text()).toBe(true);
  }
  await page.goto("/designer/environments");
  await page.getByLabel("Name", { exact: true }).fill(`vote_${suffix}`);
  await page.getByLabel("Kind", { exact: true }).selectOption("majority_vote");
  await expect(page.getByTestId("env-kind-note")).toContainText("the answer with the most votes is the team's");
  await expect(page.getByTestId("outcome-fields")).toBeVisible();
  await expect(page.getByTestId("outcome-round-note")).toBeVisible();
  await page.getByRole("checkbox", { name: `${player}_a` }).check();
  await page.getByRole("checkbox", { name: `${player}_b` }).check();
  await page.getByLabel("Dataset", { exact: true }).selectOption("reverse_word");
  await page.getByLabel("Read the answer as").selectOption("text");
  await page.getByTestId("outcome-weight-own").fill("0.5");
  await expect(page.getByTestId("env-local-issues")).toHaveCount(0);
  await page.getByTestId("env-save").click();
  await expect(page.getByRole("navigation", { name: "Environments" }).getByRole("button", { name: new RegExp(`vote_${suffix}`) })).toBeVisible();
});
