import { expect, type APIRequestContext, type Page } from "@playwright/test";

/** Library parts are set up over the app's own tRPC HTTP endpoint (their pages have their own tests). */
export async function createPart(request: APIRequestContext, kind: "actor" | "reward" | "environment", spec: Record<string, unknown>) {
  const response = await request.post("/api/trpc/part.create", { data: { json: { kind, spec, description: "" } } });
  expect(response.ok(), await response.text()).toBe(true);
}

/** The demo's trainable tiny actor. */
export function tinyStudent(name: string): Record<string, unknown> {
  return { name, model: { source: "tiny", preset: "tiny-char-2l" }, training: { learningRate: 0.003 }, sampling: { maxNewTokens: 8 } };
}

/** The demo's task: echo the asked letter, scored by letter_match. */
export function echoEnvironment(name: string, actor: string): Record<string, unknown> {
  return {
    name,
    kind: "single_turn",
    dataset: "echo_letter",
    actors: [actor],
    prompt: { field: "prompt", applyChatTemplate: false },
    rewards: [{ reward: "letter_match", weight: 1 }],
  };
}

/** Opens a new experiment in the composer and names it. */
export async function newExperiment(page: Page, name: string) {
  await page.goto("/designer/experiments");
  await page.getByTestId("experiment-new").click();
  await page.waitForURL(/\/designer\/experiments\/[^/]+$/);
  await page.getByLabel("Name", { exact: true }).fill(name);
}

/** Adds a library environment (its actors, dataset and rewards come with it). */
export async function addEnvironment(page: Page, env: string) {
  await page.getByLabel("Environments to add").selectOption(env);
  await page.getByTestId("add-environments").click();
}

/** A tiny student and an echo environment in the library, and a new experiment holding them on the CPU. */
export async function composeEchoExperiment(page: Page, request: APIRequestContext, prefix: string, suffix: string) {
  const student = `${prefix}_student_${suffix}`;
  const env = `${prefix}_echo_${suffix}`;
  await createPart(request, "actor", tinyStudent(student));
  await createPart(request, "environment", echoEnvironment(env, student));
  await newExperiment(page, `${prefix}_${suffix}`);
  await addEnvironment(page, env);
  await page.getByLabel("Device", { exact: true }).selectOption("cpu");
  return { student, env };
}

/** Empties the field labelled `label` and types `text` into it key by key, as a person would. */
export async function typeInto(page: Page, label: string, text: string) {
  const field = page.getByLabel(label, { exact: true });
  await field.click();
  await field.press("ControlOrMeta+a");
  await field.press("Backspace");
  await field.pressSequentially(text);
}
