import { expect, test } from "@playwright/test";
import { launchDemo } from "./demo";

const READABLE = /^[a-z]+-[a-z]+-\d+$/;

test("a run has a readable generated name in the header and the runs table; deleting it asks first, then removes it", async ({ page }) => {
  const runId = await launchDemo(page, 20);
  const status = page.getByTestId("run-status");
  const name = (await page.getByTestId("run-name").textContent())!.trim();
  expect(name).toMatch(READABLE);

  // A live run cannot be deleted: the button is off and says to cancel first.
  await expect(status).toHaveText("running", { timeout: 60_000 });
  await expect(page.getByTestId("run-delete")).toBeDisabled();
  await expect(page.getByTestId("run-delete")).toHaveAttribute("title", /cancel it first/);
  await expect(status).toHaveText("succeeded", { timeout: 120_000 });

  // The runs table and the dashboard show it by that name; search finds it by part of the name.
  await page.goto(`/runs?q=${encodeURIComponent(name.split("-").slice(1).join("-"))}`);
  const row = page.locator(`[data-run-id="${runId}"]`);
  await expect(row.getByTestId("run-name")).toHaveText(name);
  await page.goto("/");
  await expect(page.locator(`[data-run-id="${runId}"]`).getByTestId("run-name")).toHaveText(name);

  // Delete from the run page: the dialog names the run and what goes; dismissing it keeps the run.
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId("run-delete")).toBeEnabled();
  const messages: string[] = [];
  page.once("dialog", (dialog) => {
    messages.push(dialog.message());
    void dialog.dismiss();
  });
  await page.getByTestId("run-delete").click();
  await expect.poll(() => messages.length).toBe(1);
  expect(messages[0]).toContain(`Delete run "${name}"`);
  expect(messages[0]).toMatch(/metrics, episodes \(transcripts\), events and checkpoint records/);
  expect(messages[0]).toMatch(/files on runner .* are NOT removed/);
  await expect(page.getByTestId("run-name")).toHaveText(name);

  page.once("dialog", (dialog) => void dialog.accept());
  await page.getByTestId("run-delete").click();
  await page.waitForURL(/\/runs(\?.*)?$/);
  await page.goto(`/runs?q=${encodeURIComponent(name)}`);
  await expect(page.getByTestId("runs-total")).toHaveText("0 runs");
  await expect(page.locator(`[data-run-id="${runId}"]`)).toHaveCount(0);
  await page.screenshot({ path: test.info().outputPath("after-delete.png") });
});
