import { expect, test, type Page } from "@playwright/test";
import { spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The GPU timeline (issue 31) on a run with offload events: two actors taking turns on cuda:0 with
 * between-phase offload (simulate-run --offload plays the events a runner stores; no GPU exists here).
 * Per step and phase it names the resident model and the reload/offload moves with bytes and seconds.
 */

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const shotDir = process.env.TROUPE_E2E_SCREENSHOTS;
async function shot(page: Page, name: string) {
  if (shotDir) await page.screenshot({ path: `${shotDir}/${name}.png`, fullPage: true });
}

function simulateOffloadRun(steps: number): Promise<string> {
  return new Promise((ok, fail) => {
    const child = spawn("npx", ["tsx", "apps/web/scripts/simulate-run.ts", "--steps", String(steps), "--interval-ms", "5", "--offload"], {
      cwd: repoRoot,
      env: process.env,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("error", fail);
    child.on("exit", (code) => (code === 0 ? ok(out.split("\n")[0]!.trim()) : fail(new Error(`simulate-run exited ${code}`))));
  });
}

test("GPU timeline: which model was resident in each phase, and the offload moves, on a run with offload events", async ({ page }) => {
  const runId = await simulateOffloadRun(12);
  await page.goto(`/runs/${runId}`);
  const timeline = page.getByTestId("gpu-timeline");
  await expect(timeline).toBeVisible({ timeout: 30_000 });
  await expect(timeline).toContainText("steps 5–12");
  const device = timeline.locator('[data-testid="timeline-device"][data-device="cuda:0"]');
  await expect(device.getByRole("columnheader")).toHaveText(["cuda:0", "update · alice", "update · bob", "rollout"]);
  const last = device.locator('[data-testid="timeline-step"][data-step="12"]');
  const slots = last.getByTestId("timeline-slot");
  await expect(slots).toHaveCount(3);
  await expect(slots.nth(0)).toHaveAttribute("data-resident", "alice");
  await expect(slots.nth(1)).toHaveAttribute("data-resident", "bob");
  await expect(slots.nth(2)).toHaveAttribute("data-resident", "");
  await expect(slots.nth(2)).toContainText("no model");
  // bob: 18 GiB of parameters and Adam state reloaded before his update and offloaded after it.
  await expect(slots.nth(1).locator('[data-testid="timeline-move"][data-direction="reload"]')).toContainText(/▲ reload bob params\+optimizer 18(\.0)? GiB in \d\.\d\d s/);
  await expect(slots.nth(1).locator('[data-testid="timeline-move"][data-direction="offload"]')).toContainText(/▼ offload bob params\+optimizer 18(\.0)? GiB/);
  await timeline.scrollIntoViewIfNeeded();
  await shot(page, "gpu-timeline");
  // Earlier steps.
  await timeline.getByTestId("timeline-earlier").click();
  await expect(timeline).toContainText(/steps [01]–4/);
  await expect(device.locator('[data-testid="timeline-step"][data-step="1"]')).toBeVisible();
});
