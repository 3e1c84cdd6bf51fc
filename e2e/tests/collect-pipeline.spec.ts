import { expect, test } from "@playwright/test";
import { launchSpec } from "./runs";

/**
 * A pipeline through the run page (#18): a GRPO run of the tiny demo model finishes; its page's Collect button
 * saves the recorded episodes as a dataset; an SFT run trains on that dataset (no reward) and checkpoints; an RL
 * run's actor starts from that checkpoint, and its page links back to the SFT run.
 */
const base = (name: string, extra: Record<string, unknown>) => ({
  specVersion: 1,
  name,
  seed: 1234,
  actors: [{ name: "student", model: { source: "tiny", preset: "tiny-char-2l" }, sampling: { temperature: 1.0, maxNewTokens: 8 } }],
  datasets: [{ name: "letters", source: { kind: "builtin", name: "echo_letter", size: 24 } }],
  rewards: [{ name: "letter_match", source: { kind: "builtin", name: "letter_match" } }],
  environments: [
    { name: "echo", kind: "single_turn", dataset: "letters", actors: ["student"], prompt: { field: "prompt", applyChatTemplate: false }, rewards: [{ reward: "letter_match", weight: 1 }] },
  ],
  algorithm: { name: "grpo", groupSize: 4 },
  trainer: { steps: 2, promptsPerStep: 2, episodesPerStep: 8, device: "cpu", cpuThreads: 1 },
  ...extra,
});

test("collect from the run page, SFT on the collected dataset, then RL from the SFT checkpoint", async ({ page, request }) => {
  const stamp = Date.now();
  const grpoId = await launchSpec(request, base(`collect source ${stamp}`, {}));
  await page.goto(`/runs/${grpoId}`);
  await expect(page.getByTestId("run-status")).toHaveText("succeeded", { timeout: 180_000 });

  const name = `collected_${stamp}`;
  await expect(page.getByTestId("run-collect")).toBeEnabled({ timeout: 30_000 }); // once the runner has settled the row
  await page.getByTestId("run-collect").click();
  await page.getByTestId("collect-name").fill(name);
  await page.getByTestId("collect-min-reward").fill("0");
  await page.getByTestId("collect-submit").click();
  // The form's whole text: on failure it shows the error the server gave instead of the result.
  await expect(page.locator("form.collect-form")).toContainText(`Saved ${name}: `, { timeout: 15_000 });
  await expect(page.getByTestId("collect-result")).toContainText("from 16 recorded episodes");

  const listed = await request.get(`/api/trpc/dataset.list`);
  const items = ((await listed.json()) as { result: { data: { json: { items: { id: string; name: string }[] } } } }).result.data.json.items;
  const dataset = items.find((d) => d.name === name)!;
  const sftId = await launchSpec(
    request,
    base(`collect sft ${stamp}`, {
      algorithm: { name: "sft" },
      datasets: [{ name, source: { kind: "stored", datasetId: dataset.id, format: "jsonl" } }],
      rewards: [],
      environments: [{ name: "echo", kind: "single_turn", dataset: name, actors: ["student"], prompt: { field: "prompt", applyChatTemplate: false }, rewards: [] }],
      trainer: { steps: 2, promptsPerStep: 4, checkpointEvery: 2, device: "cpu", cpuThreads: 1 },
    }),
  );
  await page.goto(`/runs/${sftId}`);
  await expect(page.getByTestId("run-status")).toHaveText("succeeded", { timeout: 180_000 });

  const rlId = await launchSpec(
    request,
    base(`collect rl ${stamp}`, { actors: [{ name: "student", model: { source: "run", runId: sftId, step: 2 }, sampling: { temperature: 1.0, maxNewTokens: 8 } }] }),
  );
  await page.goto(`/runs/${rlId}`);
  const link = page.getByTestId("run-started-from");
  await expect(link).toContainText(`run ${sftId} step 2`);
  await expect(page.getByTestId("run-status")).toHaveText("succeeded", { timeout: 180_000 });
  await link.getByRole("link").click();
  await page.waitForURL(new RegExp(`/runs/${sftId}$`));
});
