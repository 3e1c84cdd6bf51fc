import { expect, test } from "@playwright/test";
import { createExperiment, launchExperiment, shot } from "./runs";

/**
 * Defects a newcomer met (issue 31), each as they met it: tags typed with a comma, a reward's squiggle on
 * the wrong line, GPUs on a GPU-less host called valid until the launch, and the Transcripts tab stuck
 * short of the last step after the run ended.
 */

const suffix = Date.now().toString(36);
/** A tiny CPU spec (the demo's task) with `steps` steps. */
const tinySpec = (name: string, steps: number, over: Record<string, unknown> = {}) => ({
  specVersion: 1,
  name,
  seed: 7,
  actors: [{ name: "student", model: { source: "tiny", preset: "tiny-char-2l" }, trainable: true, training: { learningRate: 0.003 }, sampling: { temperature: 1.0, maxNewTokens: 4 } }],
  datasets: [{ name: "letters", source: { kind: "builtin", name: "echo_letter", size: 24 } }],
  rewards: [{ name: "letter_match", source: { kind: "builtin", name: "letter_match" } }],
  environments: [{ name: "echo", kind: "single_turn", dataset: "letters", actors: ["student"], prompt: { field: "prompt", applyChatTemplate: false }, rewards: [{ reward: "letter_match", weight: 1 }] }],
  algorithm: { name: "grpo", groupSize: 4 },
  trainer: { steps, device: "cpu", cpuThreads: 1, promptsPerStep: 2, episodesPerStep: 4 },
  ...over,
});

test("composer: tags typed `walk, relay` are two tags, and GPUs on a GPU-less host are a problem before launch", async ({ page, request }) => {
  const id = await createExperiment(request, tinySpec(`tags_${suffix}`, 2));
  await page.goto(`/designer/experiments/${id}`);
  await expect(page.getByTestId("spec-valid")).toBeVisible();

  const tags = page.getByTestId("compose-tags");
  await tags.click();
  await page.keyboard.type("walk, relay", { delay: 40 });
  await expect(tags).toHaveValue("walk, relay");
  await page.getByTestId("compose-save").click();
  const savedTags = async () => {
    const saved = await request.get(`/api/trpc/experiment.byId?input=${encodeURIComponent(JSON.stringify({ json: { id } }))}`);
    expect(saved.ok(), await saved.text()).toBe(true);
    return ((await saved.json()) as { result: { data: { json: { spec: { tags?: string[] } } } } }).result.data.json.spec.tags;
  };
  await expect.poll(savedTags, { timeout: 15_000 }).toEqual(["walk", "relay"]);

  // The same spec placed on GPU 0 (the e2e runner has no GPU): invalid in the composer, in the launch's words.
  const gpuId = await createExperiment(request, tinySpec(`gpu_${suffix}`, 2, { actors: [{ ...tinySpec("", 2).actors[0], placement: { gpus: [0] } }] }));
  await page.goto(`/designer/experiments/${gpuId}`);
  await expect(page.getByTestId("spec-issues")).toContainText("actors.0.placement.gpus", { timeout: 20_000 });
  await expect(page.getByTestId("spec-issues")).toContainText("no runner has 1 CUDA GPU");
  await expect(page.getByTestId("spec-valid")).toHaveCount(0);
  await expect(page.getByTestId("compose-launch")).toBeDisabled();
  await shot(page, "composer-gpu-refused");
});

test("reward editor: the squiggle sits on the line and column the message names", async ({ page }) => {
  await page.goto("/designer/rewards");
  await page.getByTestId("reward-name").fill(`squiggle_${suffix}`);
  const code = "def reward(prompt, completion, **row):\n    x = 1\n    return float(completion == row['letter']))\n";
  const editor = page.getByRole("textbox", { name: "Reward function code" });
  await editor.focus();
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(code);
  // The save checks the code's syntax and answers at source.code with the line and column.
  await page.getByTestId("part-save").click();
  const message = page.getByText(/line 3, column \d+: invalid Python syntax/).first();
  await expect(message).toBeVisible();
  const column = Number(/column (\d+)/.exec((await message.textContent()) ?? "")![1]);
  const squiggle = page.locator(".monaco-editor .squiggly-error").first();
  await expect(squiggle).toBeVisible();
  // Its row: Monaco draws line n at (n - 1) line heights below the first line.
  const place = await page.evaluate(() => {
    const s = document.querySelector(".monaco-editor .squiggly-error")!.getBoundingClientRect();
    const lines = [...document.querySelectorAll(".monaco-editor .view-lines .view-line")].map((n) => n.getBoundingClientRect());
    const top = Math.min(...lines.map((l) => l.top));
    const height = lines[0]!.height;
    const left = document.querySelector(".monaco-editor .view-lines")!.getBoundingClientRect().left;
    const span = document.createElement("span");
    span.textContent = "x".repeat(100);
    document.querySelector(".monaco-editor .view-lines .view-line")!.appendChild(span);
    const charWidth = span.getBoundingClientRect().width / 100;
    span.remove();
    return { line: Math.round((s.top - top) / height) + 1, column: Math.round((s.left - left) / charWidth) + 1 };
  });
  expect(place.line).toBe(3);
  expect(Math.abs(place.column - column)).toBeLessThanOrEqual(1);
  await shot(page, "reward-squiggle");
});

test("transcripts: the live tab reaches the last step when the run ends", async ({ page, request }) => {
  const steps = 8;
  const id = await createExperiment(request, tinySpec(`transcripts_${suffix}`, steps));
  const runId = await launchExperiment(request, id);

  const hydration: string[] = [];
  page.on("pageerror", (e) => {
    if (/#418|#423|#425|hydrat/i.test(e.message)) hydration.push(e.message);
  });
  page.on("console", (m) => {
    if (m.type() === "error" && /#418|#423|#425|hydrat/i.test(m.text())) hydration.push(m.text());
  });
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId("run-name")).toBeVisible();
  await page.waitForTimeout(1500); // hydration errors arrive right after load; the live stream never idles
  expect(hydration, "React hydration errors on the run page").toEqual([]);
  await page.getByTestId("tab-transcripts").click();
  await expect(page.getByTestId("transcripts")).toBeVisible();
  await expect(page.getByTestId("run-status")).toHaveText("succeeded", { timeout: 180_000 });
  // The header names the actor its smoothed reward belongs to; the Policy charts say KL is off (klBeta 0).
  await expect(page.getByTestId("run-reward").first()).toHaveAttribute("data-actor", "student");
  await expect(page.getByTestId("run-rewards")).toContainText("student");
  await expect(page.getByTestId("chart-kl-off")).toContainText("KL is off for student");
  // No reload: the open tab itself lists the last step once the run has ended.
  const stepOptions = page.getByTestId("filter-step").locator("option");
  await expect.poll(async () => Math.max(...(await stepOptions.allTextContents()).map(Number).filter(Number.isFinite)), { timeout: 10_000 }).toBe(steps);
  await page.getByTestId("filter-step").selectOption(String(steps));
  await expect(page.getByTestId("transcripts-count")).not.toHaveText(/^0 /);
  await shot(page, "transcripts-last-step");

  // Every filter has a name a screen reader can say.
  for (const name of ["Filter transcripts by step", "Filter transcripts by actor"]) await expect(page.getByRole("combobox", { name })).toBeVisible();
  for (const name of ["Filter transcripts by GRPO group", "Lowest reward", "Highest reward"]) await expect(page.getByRole("spinbutton", { name })).toBeVisible();
  await page.goto("/runs");
  for (const name of ["Filter runs by status", "Filter runs by tag", "Filter runs by experiment", "Filter runs by source"]) {
    await expect(page.getByRole("combobox", { name })).toBeVisible();
  }
});

test("round-spec graph: the selection stays put when the text redraws the graph, and + Repeat goes under it", async ({ page, request }) => {
  const bob = `Rb_${suffix}`;
  const alice = `Ra_${suffix}`;
  for (const name of [bob, alice]) {
    const r = await request.post("/api/trpc/part.create", { data: { json: { kind: "actor", spec: { name, model: { source: "tiny" } }, description: "" } } });
    expect(r.ok(), await r.text()).toBe(true);
  }
  await page.goto("/designer/environments");
  await page.getByLabel("Name", { exact: true }).fill(`graph_${suffix}`);
  await page.getByRole("checkbox", { name: bob }).check();
  await page.getByRole("checkbox", { name: alice }).check();
  const text = page.getByRole("textbox", { name: "Round spec text" });
  const typeText = async (t: string) => {
    await text.focus();
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.press("Delete");
    await page.keyboard.insertText(t);
  };
  await typeText(`(${bob} & ${alice}) -> ${bob}*2`);
  await expect(page.getByTestId("rs-node-parallel")).toHaveCount(1);
  await page.getByTestId("rs-node-parallel").click();
  await expect(page.getByTestId("rs-selected")).toContainText("parallel");

  // The text changes elsewhere: the graph is redrawn (new node ids); the parallel node stays selected.
  await typeText(`(${bob} & ${alice}) -> ${bob}*3`);
  await expect(page.getByTestId("rs-node-repeat")).toHaveCount(1);
  await expect(page.getByTestId("rs-selected")).toContainText("parallel");
  await page.getByRole("button", { name: "+ Repeat" }).click();
  await expect(page.getByTestId("rs-add-error")).toHaveCount(0);
  await expect(page.getByTestId("rs-node-repeat")).toHaveCount(2);
  await shot(page, "round-spec-selection-kept");
});

test('actors: "New actor" after a refused save opens a blank form', async ({ page, request }) => {
  const taken = `taken_${suffix}`;
  const r = await request.post("/api/trpc/part.create", { data: { json: { kind: "actor", spec: { name: taken, model: { source: "tiny" } }, description: "" } } });
  expect(r.ok(), await r.text()).toBe(true);
  await page.goto("/designer/actors");
  await page.getByTestId("actor-name").fill(taken);
  await page.getByTestId("part-save").click();
  await expect(page.getByText(`named "${taken}" already exists`)).toBeVisible();
  await page.getByRole("button", { name: "New actor" }).click();
  await expect(page.getByTestId("actor-name")).toHaveValue("");
  // And after visiting a saved actor, "New actor" is blank too (the refused draft is not restored).
  await page.getByTestId("actors-list").getByRole("button", { name: new RegExp(taken) }).click();
  await expect(page.getByTestId("actor-name")).toHaveValue(taken);
  await page.getByRole("button", { name: "New actor" }).click();
  await expect(page.getByTestId("actor-name")).toHaveValue("");
});
