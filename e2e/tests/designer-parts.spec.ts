import { expect, test, type Page } from "@playwright/test";

/**
 * The designer's parts, as a new user: two actors (one refused until its combination makes sense),
 * a dataset upload (a malformed file refused with its line first), a reward function written in the
 * Monaco editor and tested on a runner (a score), then a bug (the traceback, and a marker in the
 * editor). Monaco must be served by us: no request may leave the app's origin.
 */

const suffix = Date.now().toString(36);
const shots = (name: string) => (process.env.TROUPE_E2E_SCREENSHOTS ? `${process.env.TROUPE_E2E_SCREENSHOTS}/${name}.png` : undefined);

async function shot(page: Page, name: string) {
  const path = shots(name);
  if (path) await page.screenshot({ path, fullPage: true });
}

/** Replace the whole text of the Monaco editor named `label`. */
async function setEditorText(page: Page, label: string, text: string) {
  const editor = page.getByRole("textbox", { name: label });
  await editor.focus();
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.press("Delete");
  // insertText arrives as one edit: no auto-closing of brackets, one auto-indent at most (harmless in Python).
  await page.keyboard.insertText(text);
}

test("designer parts: two actors, a dataset upload, a reward written and tested in the editor", async ({ page, baseURL }) => {
  const foreign: string[] = [];
  page.on("request", (r) => {
    if (!r.url().startsWith(baseURL!) && !r.url().startsWith("data:") && !r.url().startsWith("blob:")) foreign.push(r.url());
  });

  // ---- actors ----
  await page.goto("/");
  await page.getByRole("link", { name: "Designer" }).click();
  await expect(page).toHaveURL(/\/designer\/actors$/);
  const alice = `Alice_${suffix}`;
  await page.getByTestId("actor-name").fill(alice);
  await page.getByTestId("actor-lr").fill("0.003");
  await page.getByTestId("part-save").click();
  await expect(page.getByTestId("actors-list").getByRole("button", { name: new RegExp(alice) })).toBeVisible();
  await expect(page.getByRole("status").filter({ hasText: "Saved" })).toBeVisible();

  // A second actor behind an API: refused while trainable, with the reason beside the field.
  await page.getByRole("button", { name: "New actor" }).click();
  const bob = `Bob_${suffix}`;
  await page.getByTestId("actor-name").fill(bob);
  // Unsaved edits survive navigating away and back.
  await page.getByRole("link", { name: "Datasets" }).click();
  await page.getByRole("link", { name: "Actors" }).click();
  await expect(page.getByTestId("actor-name")).toHaveValue(bob);
  await expect(page.getByText("Unsaved edits restored")).toBeVisible();

  await page.getByTestId("actor-backend").selectOption("openai");
  await expect(page.getByText("an actor behind an API cannot be trained")).toBeVisible();
  await expect(page.getByTestId("part-save")).toBeDisabled();
  await page.getByTestId("actor-api-url").fill("https://api.example.com/v1");
  await page.getByTestId("actor-api-model").fill("judge-model");
  await page.getByTestId("actor-trainable").uncheck();
  await expect(page.getByText("an actor behind an API cannot be trained")).toHaveCount(0);
  await shot(page, "designer-actors");
  await page.getByTestId("part-save").click();
  await expect(page.getByTestId("actors-list").getByRole("button", { name: new RegExp(bob) })).toContainText("frozen");

  // ---- datasets ----
  await page.getByRole("link", { name: "Datasets" }).click();
  const datasetName = `letters_${suffix}`;
  await page.getByTestId("dataset-file").setInputFiles({ name: "broken.jsonl", mimeType: "application/jsonl", buffer: Buffer.from('{"prompt":"say a:","answer":"a"}\n{"prompt": oops}\n') });
  await page.getByTestId("dataset-name").fill(datasetName);
  await page.getByTestId("dataset-submit").click();
  await expect(page.getByTestId("dataset-file-error")).toContainText("line 2: not valid JSON");

  const rows = ["a", "b", "c"].map((l) => JSON.stringify({ prompt: `say ${l}:`, answer: l, level: 1 })).join("\n");
  await page.getByTestId("dataset-file").setInputFiles({ name: "letters.jsonl", mimeType: "application/jsonl", buffer: Buffer.from(`${rows}\n`) });
  await page.getByTestId("dataset-submit").click();
  await expect(page.getByTestId("dataset-title")).toHaveText(datasetName);
  await expect(page.getByTestId("dataset-columns")).toContainText("answer");
  await expect(page.getByTestId("dataset-columns")).toContainText("integer");
  await expect(page.getByTestId("dataset-preview").locator("tbody tr")).toHaveCount(3);
  await shot(page, "designer-datasets");

  // ---- reward function ----
  await page.getByRole("link", { name: "Rewards" }).click();
  await page.getByTestId("reward-name").fill(`correct_${suffix}`);
  await setEditorText(page, "Reward function code", 'def reward(prompt, completion, **row):\n    return 1.0 if completion.strip() == row["answer"] else 0.0\n');
  await expect(page.locator(".monaco-editor .view-lines")).toContainText('row["answer"]');
  await page.getByTestId("reward-test-dataset").selectOption({ label: `${datasetName} (3 rows)` });
  await expect(page.getByTestId("reward-arguments")).toContainText("level");
  await page.locator("#reward-test-count").fill("2");
  await page.getByTestId("reward-test-completion-0").fill("a");
  await page.getByTestId("reward-test-completion-1").fill("nope");
  await page.getByTestId("reward-test-run").click();
  await expect(page.getByTestId("reward-test-score-0")).toHaveText("1", { timeout: 60_000 });
  await expect(page.getByTestId("reward-test-score-1")).toHaveText("0");
  await expect(page.getByTestId("reward-test-summary")).toContainText("2/2 scored");
  await page.getByTestId("part-save").click();
  await expect(page.getByTestId("rewards-list")).toContainText(`correct_${suffix}`);
  await shot(page, "designer-rewards-score");

  // A bug: the traceback per call, and the line marked in the editor.
  await setEditorText(page, "Reward function code", 'def reward(prompt, completion, **row):\n    return 1.0 if completion.strip() == row["answr"] else 0.0\n');
  await page.getByTestId("reward-test-run").click();
  await expect(page.getByTestId("reward-test-error-0")).toContainText("KeyError: 'answr'", { timeout: 60_000 });
  await expect(page.getByTestId("reward-test-error-0")).toContainText('File "<reward code>", line 2, in reward');
  await expect(page.locator(".monaco-editor .squiggly-error").first()).toBeVisible();
  await shot(page, "designer-rewards-traceback");

  expect(foreign, "requests that left the app (a CDN?)").toEqual([]);
});
