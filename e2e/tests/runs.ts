import { expect, type APIRequestContext, type Page } from "@playwright/test";
import { spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** What several browser tests do around a run: screenshots, an experiment created and launched over the app's
 * own tRPC endpoint (as the designer does), and a made-up run played into the database (simulate-run). */

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** A full-page screenshot when TROUPE_E2E_SCREENSHOTS names a folder (the CI run leaves it unset). */
export async function shot(page: Page, name: string) {
  const dir = process.env.TROUPE_E2E_SCREENSHOTS;
  if (dir) await page.screenshot({ path: `${dir}/${name}.png`, fullPage: true });
}

/** Creates an experiment from a RunSpec; its id. */
export async function createExperiment(request: APIRequestContext, spec: unknown): Promise<string> {
  const created = await request.post("/api/trpc/experiment.create", { data: { json: { spec } } });
  expect(created.ok(), await created.text()).toBe(true);
  return ((await created.json()) as { result: { data: { json: { id: string } } } }).result.data.json.id;
}

/** Launches an experiment (optionally with overrides); the queued run's id. */
export async function launchExperiment(request: APIRequestContext, experimentId: string, extra: Record<string, unknown> = {}): Promise<string> {
  const launched = await request.post("/api/trpc/experiment.launch", { data: { json: { experimentId, priority: 0, ...extra } } });
  expect(launched.ok(), await launched.text()).toBe(true);
  return ((await launched.json()) as { result: { data: { json: { runId: string } } } }).result.data.json.runId;
}

/** Creates an experiment from a RunSpec and launches it; the run's id. */
export async function launchSpec(request: APIRequestContext, spec: unknown): Promise<string> {
  return launchExperiment(request, await createExperiment(request, spec));
}

/**
 * Plays a made-up run into the test database and stream (apps/web/scripts/simulate-run.ts, the way a runner
 * would; `offload`: two actors taking turns on cuda:0 with between-phase offload). Resolves with its id once
 * printed; `done` resolves when the run has ended.
 */
export function simulateRun(steps: number, intervalMs: number, options: { offload?: boolean } = {}): Promise<{ id: string; done: Promise<void> }> {
  const args = ["tsx", "apps/web/scripts/simulate-run.ts", "--steps", String(steps), "--interval-ms", String(intervalMs)];
  if (options.offload) args.push("--offload");
  return new Promise((resolveStart, reject) => {
    const child = spawn("npx", args, { cwd: repoRoot, env: process.env, stdio: ["ignore", "pipe", "inherit"] });
    const done = new Promise<void>((ok, fail) => child.on("exit", (code) => (code === 0 ? ok() : fail(new Error(`simulate-run exited ${code}`)))));
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const id = out.split("\n")[0]?.trim();
      if (out.includes("\n") && id) resolveStart({ id, done });
    });
    child.on("error", reject);
  });
}

/** A finished made-up run with offload events; its id. */
export async function simulateOffloadRun(steps: number): Promise<string> {
  const run = await simulateRun(steps, 5, { offload: true });
  await run.done;
  return run.id;
}
