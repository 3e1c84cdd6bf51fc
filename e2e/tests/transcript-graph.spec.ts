import { MULTI_AGENT_DEMO_SPEC_INPUT } from "@troupe/contracts";
import { expect, test, type Page } from "@playwright/test";

/**
 * Agents × turns (issue 31): a transcript drawn on its round-spec graph. A real run of the two-actor relay
 * demo with its exchange repeated (`(alice -> bob)*2`), so each actor node holds two turns: the graph
 * shows at every node who spoke at which turn, an excerpt, the speaker's reward and advantage, and a click
 * shows the message, the same text the message view shows.
 */

const shotDir = process.env.TROUPE_E2E_SCREENSHOTS;
async function shot(page: Page, name: string) {
  if (shotDir) await page.screenshot({ path: `${shotDir}/${name}.png`, fullPage: true });
}

const relaySpec = (name: string) => ({
  ...MULTI_AGENT_DEMO_SPEC_INPUT,
  name,
  environments: MULTI_AGENT_DEMO_SPEC_INPUT.environments.map((e) => ({ ...e, roundSpec: "(alice -> bob)*2" })),
  trainer: { steps: 2, promptsPerStep: 1, episodesPerStep: 8, device: "cpu", cpuThreads: 1 },
});

test("a transcript on its round-spec graph: who spoke at each node, excerpt, reward and advantage; a click shows the message", async ({ page, request }) => {
  const name = `relay graph ${Date.now()}`;
  const created = await request.post("/api/trpc/experiment.create", { data: { json: { spec: relaySpec(name) } } });
  expect(created.ok(), await created.text()).toBe(true);
  const experimentId = ((await created.json()) as { result: { data: { json: { id: string } } } }).result.data.json.id;
  const launched = await request.post("/api/trpc/experiment.launch", { data: { json: { experimentId, priority: 0 } } });
  expect(launched.ok(), await launched.text()).toBe(true);
  const runId = ((await launched.json()) as { result: { data: { json: { runId: string } } } }).result.data.json.runId;

  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId("run-status")).toHaveText("succeeded", { timeout: 240_000 });
  await page.getByTestId("tab-transcripts").click();
  await page.getByTestId("transcript-row").first().click();

  // The message view: the four spoken turns, alice and bob in turn.
  const spoken = page.locator('[data-testid="transcript-turn"][data-role="assistant"]');
  await expect(spoken).toHaveCount(4);
  expect(await spoken.evaluateAll((els) => els.map((e) => e.getAttribute("data-actor")))).toEqual(["alice", "bob", "alice", "bob"]);
  const bobSecond = (await spoken.nth(3).locator("pre").textContent()) ?? "";

  await page.getByTestId("transcript-on-graph").click();
  const graph = page.getByTestId("transcript-graph");
  await expect(graph).toBeVisible();
  await expect(page.getByTestId("transcript-graph-summary")).toContainText("4 turns on (alice -> bob)*2");
  await expect(graph.getByTestId("tg-node-repeat")).toContainText("Repeat * ×2");
  // One node per actor, each holding the turns that actor spoke: the repeat's iterations land on the same node.
  const alice = graph.locator('[data-testid="tg-node-actor"]', { hasText: "Actor alice" });
  const bob = graph.locator('[data-testid="tg-node-actor"]', { hasText: "Actor bob" });
  await expect(alice).toHaveAttribute("data-turns", "0,2");
  await expect(bob).toHaveAttribute("data-turns", "1,3");
  const turn3 = bob.locator('[data-testid="tg-turn"][data-turn="3"]');
  await expect(turn3).toContainText(/bob · turn 3 · r -?[\d.e+-]+ · adv -?[\d.e+-]+/);
  await shot(page, "transcript-graph");

  await turn3.click();
  const message = page.getByTestId("transcript-graph-message");
  await expect(message).toContainText("bob");
  await expect(message).toContainText("turn 3");
  await expect(message.locator("pre")).toHaveText(bobSecond === "(empty)" ? "(empty)" : bobSecond);
  await expect(turn3).toHaveAttribute("aria-pressed", "true");
  await shot(page, "transcript-graph-message");

  // Back to the messages.
  await page.getByTestId("transcript-as-messages").click();
  await expect(spoken).toHaveCount(4);
});
