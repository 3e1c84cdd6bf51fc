import { expect, test } from "@playwright/test";
import { addEnvironment, createPart, echoEnvironment, newExperiment } from "./compose";
import { shot, simulateOffloadRun } from "./runs";

/**
 * Training engines (issue 14) as a user meets them: an actor's backend, precision and CPU processes
 * chosen in the designer, a choice no runner can honour shown disabled with why, the run-wide rules
 * (every actor the same number of ranks; DeepSpeed's CPU optimizer with between-phase offload) beside
 * their fields in the composer; and a run's offload moves on the memory timeline and in its table.
 */

const suffix = Date.now().toString(36);
test("designer: an actor's training engine, and the run-wide rules beside their fields", async ({ page, request }) => {
  const alice = `eng_alice_${suffix}`;
  const bob = `eng_bob_${suffix}`;
  const env = `eng_env_${suffix}`;

  await page.goto("/designer/actors");
  await page.getByTestId("actor-name").fill(alice);
  // The test's only runner is a CPU host without vLLM or DeepSpeed (its capabilities, published with its
  // heartbeat): both are offered disabled, with the reason beside the field (runners.spec.ts covers more).
  await expect(page.getByTestId("actor-backend").locator('option[value="vllm"]')).toBeDisabled();
  await expect(page.getByTestId("actor-backend-note-vllm")).toContainText("vllm: no live runner has vLLM and a CUDA GPU; runners: ");
  await expect(page.getByTestId("actor-train-backend")).toHaveValue("torch");
  await expect(page.getByTestId("actor-train-backend").locator('option[value="deepspeed"]')).toBeDisabled();
  await expect(page.getByTestId("actor-train-backend-note-deepspeed")).toContainText("deepspeed: no live runner has DeepSpeed and a CUDA GPU");
  await page.getByTestId("actor-train-backend").selectOption("fsdp2");
  await page.getByTestId("actor-precision").selectOption("bf16");
  await page.getByTestId("actor-processes").fill("2");
  // GPUs and CPU processes together: refused beside the processes field, and saving waits.
  await page.getByTestId("actor-gpus").fill("0");
  await expect(page.getByText("give either GPUs or CPU processes, not both")).toBeVisible();
  await expect(page.getByTestId("part-save")).toBeDisabled();
  await page.getByTestId("actor-gpus").fill("");
  await expect(page.getByText("give either GPUs or CPU processes, not both")).toHaveCount(0);
  await page.getByTestId("actor-grad-ckpt").check();
  await page.getByTestId("actor-processes").scrollIntoViewIfNeeded();
  await shot(page, "engines-actor");
  await page.getByTestId("part-save").click();
  await expect(page.getByTestId("actors-list").getByRole("button", { name: new RegExp(alice) })).toContainText("fsdp2 bf16");

  // What was saved is the contract's fields.
  const list = await request.get(`/api/trpc/part.list?input=${encodeURIComponent(JSON.stringify({ json: { kind: "actor" } }))}`);
  expect(list.ok(), await list.text()).toBe(true);
  const saved = ((await list.json()) as { result: { data: { json: { items: { name: string; spec: Record<string, unknown> }[] } } } }).result.data.json.items.find((p) => p.name === alice);
  expect(saved?.spec).toMatchObject({ training: { backend: "fsdp2", precision: "bf16", gradientCheckpointing: true }, placement: { processes: 2 } });

  // A second actor asking for 3 ranks, on DeepSpeed with its optimizer on the CPU.
  await createPart(request, "actor", {
    name: bob,
    model: { source: "tiny" },
    training: { backend: "deepspeed", offload: { optimizer: true } },
    placement: { processes: 3 },
  });
  await createPart(request, "environment", echoEnvironment(env, alice));

  await newExperiment(page, `engines_${suffix}`);
  await addEnvironment(page, env);
  await expect(page.locator("#field-actors")).toContainText(alice);
  await page.getByLabel("Actors to add").selectOption(bob);
  await page.getByTestId("add-actors").click();

  // Two actors asking for different process counts: the issue is beside the second one's field.
  const ranksIssue = page.getByTestId("issue-actors.1.placement.processes");
  await expect(ranksIssue).toContainText(`asks for 3 ranks but "${alice}" asks for 2`);
  await expect(page.locator("#field-actors\\.1\\.placement\\.processes")).toHaveAttribute("aria-invalid", "true");
  await expect(page.locator("#field-actors\\.0\\.training\\.backend")).toHaveValue("fsdp2");
  await expect(page.locator("#field-actors\\.0\\.training\\.precision")).toHaveValue("bf16");

  // Between-phase offload on, with DeepSpeed keeping bob's optimizer on the CPU: refused beside the field.
  const between = page.getByLabel("Offload between phases");
  await expect(between).toHaveValue("auto");
  await between.selectOption("on");
  await expect(page.getByTestId("issue-trainer.offloadBetweenPhases")).toContainText("DeepSpeed issue 6596");
  await page.getByLabel("Micro-batch size").fill("4");
  await page.getByLabel("Cluster", { exact: true }).selectOption("ray");
  await expect(page.getByTestId("note-cluster-ray")).toContainText("needs Ray on the runner");
  await expect(page.getByLabel("Placement strategy")).toHaveValue("PACK");
  await page.locator("#field-actors\\.1\\.placement\\.processes").scrollIntoViewIfNeeded();
  await shot(page, "engines-composer-issues");

  // Fixed: the same number of ranks, and between-phase offload back to auto.
  await page.locator("#field-actors\\.1\\.placement\\.processes").fill("2");
  await expect(ranksIssue).toHaveCount(0);
  await between.selectOption("auto");
  await expect(page.getByTestId("issue-trainer.offloadBetweenPhases")).toHaveCount(0);
  // What is left is what no live runner here has (no CUDA, so no DeepSpeed, and nothing to offload from):
  // shown before launch in the launch's own words (issue 31), not "✓ The spec is valid".
  await expect(page.getByTestId("spec-issues")).toContainText("actors.1.training.backend");
  await expect(page.getByTestId("spec-issues")).toContainText("no runner has DeepSpeed and a CUDA GPU");
  await expect(page.getByTestId("spec-issues")).toContainText("actors.1.training.offload.optimizer");
  await page.getByTestId("spec-export-open").click();
  const yaml = await page.getByTestId("spec-export-text").inputValue();
  expect(yaml).toMatch(/microBatchSize: 4/);
  expect(yaml).toMatch(/kind: ray/);
  expect(yaml).not.toMatch(/offloadBetweenPhases/);
});

test("memory tab: each offload move marked on the timeline with its bytes and seconds, and the offloads table", async ({ page }) => {
  const pageErrors: string[] = [];
  page.on("pageerror", (e) => pageErrors.push(e.message));
  const steps = 6;
  const runId = await simulateOffloadRun(steps);
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId("run-status")).toHaveText("succeeded");

  // Two actors × (reload + offload) per step, on every memory chart (host and cuda:0).
  const gpuChart = page.getByTestId("chart-memory-cuda-0");
  await expect(gpuChart.locator(".canvas-plot")).toHaveAttribute("data-markers", String(steps * 4));
  await expect(page.getByTestId("chart-memory").locator(".canvas-plot")).toHaveAttribute("data-markers", String(steps * 4));

  const table = page.getByTestId("offloads");
  await expect(table.locator("tbody tr")).toHaveCount(4);
  // simulate-run moves 6 GiB of alice and 18 GiB of bob each way every step.
  await expect(page.getByTestId("offloads-alice-offload")).toContainText(`${steps}`);
  await expect(page.getByTestId("offloads-alice-offload")).toContainText("36.0 GiB");
  await expect(page.getByTestId("offloads-bob-reload")).toContainText("108 GiB");

  // Hover the middle step: the tooltip lists that step's moves with bytes and seconds.
  await gpuChart.scrollIntoViewIfNeeded();
  const box = (await gpuChart.locator(".u-over").boundingBox())!;
  const middle = 3;
  await page.mouse.move(box.x + (box.width * (middle - 1)) / (steps - 1), box.y + box.height / 2);
  const tip = gpuChart.locator(".plot-tooltip");
  await expect(tip).toBeVisible();
  await expect(tip).toContainText(`step ${middle}`);
  await expect(tip).toContainText(/offload alice params \+ optimizer \(after update\): 6\.00 GiB in 0\.\d{3} s/);
  await expect(tip).toContainText(/reload bob params \+ optimizer \(for update\): 18\.0 GiB in 1\.\d{3} s/);
  await shot(page, "engines-memory-offloads");
  expect(pageErrors).toEqual([]);
});
