import { expect, test, type Page } from "@playwright/test";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { launchSpec } from "./runs";

/**
 * Runners in plain sight (issue 16), as a user meets them. The test's runner is a CPU host (no CUDA, no
 * vLLM): a vLLM actor is offered disabled with why in the designer, and a launch that needs vLLM is refused
 * naming the field. Then a second runner process joins, whose runtime (the runner tests' fake `troupe`)
 * reports a 2-GPU vLLM host no machine here is: the /runners page shows both, their GPUs, engines and
 * heartbeats, and GPU memory per host in a chart.
 */

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const shotDir = process.env.TROUPE_E2E_SCREENSHOTS;
const suffix = Date.now().toString(36);
const GIB = 1024 ** 3;

async function shot(page: Page, name: string) {
  if (shotDir) await page.screenshot({ path: `${shotDir}/${name}.png`, fullPage: true });
}

const vllmSpec = (name: string) => ({
  specVersion: 1,
  name,
  seed: 1,
  actors: [{ name: "student", model: { source: "huggingface", id: "Qwen/Qwen2.5-0.5B-Instruct" }, backend: "vllm", sampling: { temperature: 1.0, maxNewTokens: 8 } }],
  datasets: [{ name: "letters", source: { kind: "builtin", name: "echo_letter", size: 24 } }],
  rewards: [{ name: "letter_match", source: { kind: "builtin", name: "letter_match" } }],
  environments: [
    {
      name: "echo",
      kind: "single_turn",
      dataset: "letters",
      actors: ["student"],
      prompt: { field: "prompt", applyChatTemplate: false },
      rewards: [{ reward: "letter_match", weight: 1 }],
    },
  ],
  trainer: { steps: 2 },
});

test("runners: a choice no live runner can honour is disabled with why, and a launch needing it is refused naming the field", async ({ page, request }) => {
  await page.goto("/designer/actors");
  await page.getByTestId("actor-name").fill(`runners_actor_${suffix}`);
  const backend = page.getByTestId("actor-backend");
  await expect(backend.locator('option[value="vllm"]')).toBeDisabled();
  await expect(page.getByTestId("actor-backend-note-vllm")).toContainText(/^vllm: no live runner has vLLM and a CUDA GPU; runners: \S+ \(torch [^,]+, no CUDA/);
  await backend.scrollIntoViewIfNeeded();
  await shot(page, "runners-designer-disabled");

  const created = await request.post("/api/trpc/experiment.create", { data: { json: { spec: vllmSpec(`vllm_${suffix}`) } } });
  expect(created.ok(), await created.text()).toBe(true);
  const experimentId = ((await created.json()) as { result: { data: { json: { id: string } } } }).result.data.json.id;
  await page.goto(`/designer/experiments/${experimentId}`);
  // The composer shows the same reason beside the actor, and the launch is refused before anything is queued.
  await expect(page.getByTestId("actor-backend-unavailable-0")).toContainText("vllm cannot run: no live runner has vLLM");
  // Before any click, the launch's own runner check lists it as a problem of the spec (it said "✓ The spec is
  // valid" and was refused only at launch, issue 31), so Launch is disabled.
  await expect(page.getByTestId("spec-issues")).toContainText("no runner has vLLM and a CUDA GPU; runners: ");
  await expect(page.getByTestId("spec-valid")).toHaveCount(0);
  await expect(page.getByTestId("compose-launch")).toBeDisabled();
  await page.getByTestId("spec-issues").scrollIntoViewIfNeeded();
  await shot(page, "runners-refused-launch");
  // A launch made anyway is refused naming the field, before anything is queued.
  const launched = await request.post("/api/trpc/experiment.launch", { data: { json: { experimentId } } });
  expect(launched.status()).toBe(400);
  expect(await launched.text()).toContain("actors.0.backend: no runner has vLLM and a CUDA GPU");
  await expect(page).toHaveURL(new RegExp(`/designer/experiments/${experimentId}$`));
});

test("runners page: every runner with its GPUs, engines and heartbeat, and GPU memory per host", async ({ page, request }) => {
  const folder = mkdtempSync(join(tmpdir(), "troupe-e2e-runner-"));
  const caps = join(folder, "caps.json");
  writeFileSync(
    caps,
    JSON.stringify({
      runtimeVersion: "0.1.0",
      hostname: "gpu-host",
      python: "3.11.7",
      cuda: "12.8",
      gpus: [0, 1].map((index) => ({ index, name: "NVIDIA H100 80GB HBM3", totalBytes: 80 * GIB, freeBytes: (index === 0 ? 50 : 79) * GIB, bf16: true })),
      cpuCount: 32,
      memoryBytes: 256 * GIB,
      engines: { torch: "2.8.0", transformers: "4.57.0", accelerate: "1.10.0", peft: "0.17.1", vllm: "0.11.0", deepspeed: "0.17.5", "liger-kernel": "0.6.2", "flash-attn": "2.8.3", ray: "2.49.0", triton: "3.4.0" },
      trainBackends: ["torch", "fsdp2", "deepspeed"],
      rolloutBackends: ["hf", "openai", "vllm"],
      clusterKinds: ["local", "ray"],
      precisions: ["fp32", "bf16"],
      sandbox: { usable: true, mode: "bwrap", detail: null },
    }),
  );
  const id = `e2e-gpu-${suffix}`;
  let runner: ChildProcess | null = spawn(process.execPath, ["--import", "tsx", "apps/runner/src/main.ts"], {
    cwd: repoRoot,
    env: {
      ...process.env,
      TROUPE_RUNNER_ID: id,
      TROUPE_RUNNER_GPUS: "2",
      TROUPE_PRESENCE_MS: "1000",
      TROUPE_REQUEUE_CHECK_MS: "0",
      TROUPE_PYTHON: "python3",
      TROUPE_WORK_DIR: join(folder, "runs"),
      PYTHONPATH: join(repoRoot, "apps/runner/test/fixtures/fake-runtime"),
      TROUPE_FAKE_CAPABILITIES: caps,
    },
    stdio: "ignore",
  });
  try {
    await page.goto("/runners");
    const card = page.getByTestId(`runner-card-${id}`);
    await expect(card).toBeVisible({ timeout: 60_000 });
    await expect(page.getByTestId(`runner-state-${id}`)).toHaveText("live");
    await expect(page.getByTestId(`runner-engines-${id}`)).toContainText("vLLM 0.11.0", { timeout: 60_000 });
    await expect(page.getByTestId(`runner-engines-${id}`)).toContainText("DeepSpeed 0.17.5");
    await expect(page.getByTestId(`runner-gpu-${id}-0`)).toContainText("NVIDIA H100 80GB HBM3");
    await expect(page.getByTestId(`runner-gpu-${id}-0`)).toContainText("50.0 GiB of 80.0 GiB");
    await expect(page.getByTestId(`runner-gpu-${id}-1`)).toContainText("free");
    await expect(card).toContainText("32 cores, 256 GiB");
    await expect(card).toContainText(/Heartbeat\s*(just now|\d+s ago)/);
    // The test's own runner (a CPU host) is live beside it, with its real engines.
    const cpuCards = page.locator('[data-testid^="runner-card-"]').filter({ hasText: "No GPUs: CPU runs only" }).filter({ has: page.locator(".runner-badge-live") });
    await expect(cpuCards.first()).toContainText(/torch \d/);
    // GPU memory per host, drawn by Recharts: one bar group per GPU.
    const chart = page.getByTestId("gpu-memory-chart");
    await expect(chart.locator(".recharts-bar-rectangle").first()).toBeVisible();
    await expect(chart).toContainText(`${id}:0`);
    await shot(page, "runners-page");

    // Issue #25: a spec with no placement that needs CUDA claims a GPU of the GPU runner (the CPU runner hands it
    // over); the run page says which one it holds, in the runner's numbering.
    const cudaSpec = { ...vllmSpec(`gpu_claim_${suffix}`), actors: [{ ...vllmSpec("x").actors[0], model: { source: "tiny", preset: "tiny-char-2l" }, backend: "hf" }], trainer: { steps: 2, device: "cuda" } };
    const runId = await launchSpec(request, cudaSpec);
    await page.goto(`/runs/${runId}`);
    await expect(page.getByTestId("run-gpus")).toHaveText(/^GPU\s*0$/, { timeout: 60_000 });
    await shot(page, "run-page-gpus");
    await page.goto("/runners");

    // The runner stops cleanly: shown as stopped, no longer counted live.
    runner.kill("SIGTERM");
    await new Promise((r) => runner!.once("exit", r));
    runner = null;
    await expect(page.getByTestId(`runner-state-${id}`)).toHaveText("stopped", { timeout: 30_000 });
  } finally {
    runner?.kill("SIGKILL");
  }
});
