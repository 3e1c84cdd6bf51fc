import { expect, test, type Page } from "@playwright/test";
import { addEnvironment, createPart, echoEnvironment, newExperiment, tinyStudent } from "./compose";
import { shot } from "./runs";

/**
 * The designer's second half, as a researcher: draw a round spec in the graph and see the text
 * follow, type text and see the graph follow; compose an experiment from library parts, see it
 * validated field by field and its memory estimated, launch it and watch it train; clone the
 * run's spec back into the composer.
 */

const suffix = Date.now().toString(36);
/** The text of the Monaco editor named `label`, as the model holds it. */
async function editorText(page: Page, label: string): Promise<string> {
  return page.evaluate((l) => {
    // Monaco puts the label on its input element (a textarea or an EditContext div, by version).
    const input = document.querySelector(`.monaco-editor [aria-label="${l}"]`);
    const editor = input?.closest(".monaco-editor");
    const lines = editor ? [...editor.querySelectorAll(".view-line")].map((n) => (n.textContent ?? "").replace(/\u00a0/g, " ")) : [];
    return lines.join("\n").trim();
  }, label);
}

async function setEditorText(page: Page, label: string, text: string) {
  const editor = page.getByRole("textbox", { name: label });
  await editor.focus();
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(text);
}

test("round spec: draw it in the graph and see the text; type text and see the graph", async ({ page, request }) => {
  const bob = `Bob_${suffix}`;
  const alice = `Alice_${suffix}`;
  await createPart(request, "actor", { name: bob, model: { source: "tiny" } });
  await createPart(request, "actor", { name: alice, model: { source: "tiny" }, trainable: false });

  await page.goto("/designer/environments");
  await page.getByLabel("Name", { exact: true }).fill(`talk_${suffix}`);
  await page.getByRole("checkbox", { name: bob }).check();
  await page.getByRole("checkbox", { name: alice }).check();

  // Draw: start → sequence → Bob, Alice (from the toolbar, keyboard-reachable).
  await page.getByRole("button", { name: "+ Sequence" }).click();
  const actorToAdd = page.getByLabel("Actor to add");
  await actorToAdd.selectOption(bob);
  await page.getByRole("button", { name: "+ Actor" }).click();
  await actorToAdd.selectOption(alice);
  await page.getByRole("button", { name: "+ Actor" }).click();
  await shot(page, "compose-graph-first-two");
  await expect.poll(() => editorText(page, "Round spec text")).toBe(`${bob} -> ${alice}`);
  await expect(page.getByTestId("rs-node-actor")).toHaveCount(2);

  // Add a repeated choice under the sequence: select the sequence node, then add.
  await page.getByTestId("rs-node-sequence").click();
  await page.getByRole("button", { name: "+ Repeat" }).click();
  await page.getByRole("button", { name: "+ Choice" }).click();
  await actorToAdd.selectOption(bob);
  await page.getByRole("button", { name: "+ Actor" }).click();
  await page.getByTestId("rs-node-choice").click();
  await actorToAdd.selectOption(alice);
  await page.getByRole("button", { name: "+ Actor" }).click();
  await expect.poll(() => editorText(page, "Round spec text")).toBe(`${bob} -> ${alice} -> (${bob} / ${alice})*(1..3)`);
  // A weight typed on the edge goes into the text.
  await page.getByLabel("Choice weight").last().fill("3");
  await expect.poll(() => editorText(page, "Round spec text")).toBe(`${bob} -> ${alice} -> (${bob}:1 / ${alice}:3)*(1..3)`);
  await expect(page.getByTestId("rs-preview")).toBeVisible();
  await expect(page.getByTestId("rs-stats")).toContainText(bob);
  await shot(page, "compose-graph-drawn");

  // Type text: the graph follows.
  await setEditorText(page, "Round spec text", `(${bob} & ${alice}) -> ${bob}*2`);
  await expect(page.getByTestId("rs-node-parallel")).toHaveCount(1);
  await expect(page.getByTestId("rs-node-repeat")).toHaveCount(1);
  await expect(page.getByTestId("rs-node-choice")).toHaveCount(0);

  // An unknown actor: a marker in the editor and the error with line and column.
  await setEditorText(page, "Round spec text", `${bob} ->\n  Carol`);
  await expect(page.getByTestId("rs-errors")).toContainText("line 2, column 3");
  await expect(page.locator(".monaco-editor .squiggly-error")).not.toHaveCount(0);
  await shot(page, "compose-graph-error");

  await setEditorText(page, "Round spec text", `${bob} -> ${alice}`);
  await page.getByRole("checkbox", { name: "letter_match" }).check();
  await page.getByLabel("Dataset", { exact: true }).selectOption("echo_letter");
  await page.getByTestId("env-save").click();
  await expect(page.getByRole("navigation", { name: "Environments" }).getByRole("button", { name: new RegExp(`talk_${suffix}`) })).toBeVisible();
});

test("compose an experiment from parts, launch it, see it train, clone its spec", async ({ page, request }) => {
  const student = `student_${suffix}`;
  const env = `echo_${suffix}`;
  await createPart(request, "actor", tinyStudent(student));
  await createPart(request, "environment", echoEnvironment(env, student));

  await newExperiment(page, `composed_${suffix}`);
  // Empty lists are reported at their field.
  await expect(page.getByTestId("spec-issues")).toContainText("environments");

  await addEnvironment(page, env);
  // The environment's actor, dataset and reward came with it.
  await expect(page.locator("#field-actors")).toContainText(student);
  await expect(page.locator("#field-datasets")).toContainText("echo_letter");
  await expect(page.locator("#field-rewards")).toContainText("letter_match");

  await page.getByLabel("Device", { exact: true }).selectOption("cpu");
  await page.getByLabel("CPU threads", { exact: true }).fill("1");
  await page.getByLabel("Prompts per step", { exact: true }).fill("4");
  await page.getByLabel("Group size", { exact: true }).fill("4");
  // A bad value: its error beside the field and in the list, which jumps to it.
  await page.getByLabel("Steps", { exact: true }).fill("-1"); // 0 is an eval-only run
  await expect(page.getByTestId("issue-trainer.steps")).toBeVisible();
  await page.getByTestId("spec-issues").getByRole("button", { name: "trainer.steps" }).click();
  await expect(page.getByLabel("Steps", { exact: true })).toBeFocused();
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.type("6");
  await expect(page.getByTestId("spec-valid")).toBeVisible();
  await expect(page.getByTestId("memory-estimate")).toContainText(student);
  // trainer.device is cpu: the estimate is of host memory, not "GPU 0 … of 80 GiB" (issue 31).
  await expect(page.getByTestId("host-load")).toContainText("Host memory");
  await expect(page.getByTestId("memory-estimate-target")).toContainText("trainer.device is cpu");

  // Export as YAML shows the spec as text.
  await page.getByTestId("spec-export-open").click();
  await expect(page.getByTestId("spec-export-text")).toHaveValue(new RegExp(`name: composed_${suffix}`));
  await expect(page.getByTestId("spec-export-text")).toHaveValue(/specVersion: 1/);
  await shot(page, "compose-experiment");
  // Importing broken YAML is refused with its line and column; the draft stays as it was.
  await page.getByTestId("spec-import-open").click();
  await page.getByTestId("spec-import-text").fill("specVersion: 1\nname: [oops\n");
  await page.getByTestId("spec-import-submit").click();
  await expect(page.getByTestId("spec-import-error")).toContainText(/line \d+, column \d+: invalid YAML/);
  await expect(page.getByTestId("spec-valid")).toBeVisible();

  await page.getByTestId("compose-priority").fill("5");
  await page.getByTestId("compose-launch").click();
  await page.waitForURL(/\/runs\/[^/]+$/);
  const status = page.getByTestId("run-status");
  await expect(status).toHaveText(/running|succeeded/, { timeout: 120_000 });
  await expect(status).toHaveText("succeeded", { timeout: 180_000 });
  await shot(page, "compose-run");

  // Clone the run's spec and change one thing.
  await page.getByTestId("run-clone-spec").click();
  await page.waitForURL(/\/designer\/experiments\/[^/]+$/);
  await expect(page.getByLabel("Name", { exact: true })).toHaveValue(/from run/);
  await expect(page.getByLabel("Steps", { exact: true })).toHaveValue("6");
  await expect(page.getByTestId("spec-valid")).toBeVisible();
});
