import { expect, test, type APIRequestContext } from "@playwright/test";
import { typeInto } from "./compose";
import { shot } from "./runs";

/**
 * #27 in the designer: one policy in two seats through the Roles editor (self-play: X and O are one actor), and the
 * cory learner from its template, its swap period typed key by key. What is saved is the contract's fields.
 */

const suffix = Date.now().toString(36);

async function environments(request: APIRequestContext): Promise<{ name: string; spec: Record<string, unknown> }[]> {
  const list = await request.get(`/api/trpc/part.list?input=${encodeURIComponent(JSON.stringify({ json: { kind: "environment" } }))}`);
  expect(list.ok(), await list.text()).toBe(true);
  return ((await list.json()) as { result: { data: { json: { items: { name: string; spec: Record<string, unknown> }[] } } } }).result.data.json.items;
}

test("roles: one actor plays X and O of a tic-tac-toe environment, named key by key, and it saves", async ({ page, request }) => {
  const player = `Policy_${suffix}`;
  const created = await request.post("/api/trpc/part.create", { data: { json: { kind: "actor", spec: { name: player, model: { source: "tiny" } }, description: "" } } });
  expect(created.ok(), await created.text()).toBe(true);

  await page.goto("/designer/environments");
  await page.getByLabel("Name", { exact: true }).fill(`selfplay_${suffix}`);
  await page.getByLabel("Kind", { exact: true }).selectOption("game");
  await expect(page.getByTestId("game-fields")).toBeVisible();
  await page.getByLabel("Opponent", { exact: true }).selectOption("actors");
  await page.getByRole("checkbox", { name: player }).check();
  await page.getByLabel("Dataset", { exact: true }).selectOption("echo_letter");

  // Roles on: the actor is its own role; rename it X, add a second role, name it O, played by the same actor.
  await page.getByTestId("roles-on").check();
  await typeInto(page, "Name of role 1", "X");
  await page.getByTestId("role-add").click();
  await typeInto(page, "Name of role 2", "O");
  // A new role starts with an actor the environment already uses (not the first of every test's actors): self-play.
  await expect(page.getByLabel("Actor playing O", { exact: true })).toHaveValue(player);
  await expect(page.getByTestId("env-local-issues")).toHaveCount(0);
  await shot(page, "roles-selfplay");
  await page.getByTestId("env-save").click();
  await expect(page.getByRole("navigation", { name: "Environments" }).getByRole("button", { name: new RegExp(`selfplay_${suffix}`) })).toBeVisible();

  const saved = (await environments(request)).find((p) => p.name === `selfplay_${suffix}`);
  expect(saved?.spec).toMatchObject({ kind: "game", actors: [player], roles: { X: player, O: player }, game: { opponent: "actors" } }); // the game left at its default (tic_tac_toe) is the schema's default, not written
});

test("cory: the CORY pair template, its swap period typed key by key, saves with pioneer and observer roles", async ({ page, request }) => {
  await page.goto("/designer/experiments");
  await page.getByTestId("template-cory").click();
  await page.waitForURL(/\/designer\/experiments\/[^/]+$/);
  const id = page.url().split("/").pop()!;
  await page.getByLabel("Name", { exact: true }).fill(`cory_${suffix}`);
  await expect(page.getByLabel("Swap roles every", { exact: true })).toBeVisible();
  await typeInto(page, "Swap roles every", "3");
  await shot(page, "cory-composer");
  await page.getByTestId("compose-save").click();
  await expect(page.getByTestId("compose-status")).toHaveText("Saved");

  const saved = await request.get(`/api/trpc/experiment.byId?input=${encodeURIComponent(JSON.stringify({ json: { id } }))}`);
  expect(saved.ok(), await saved.text()).toBe(true);
  const spec = ((await saved.json()) as { result: { data: { json: { spec: { algorithm: unknown; environments: Record<string, unknown>[] } } } } }).result.data.json.spec;
  expect(spec.algorithm).toMatchObject({ name: "cory", cory: { swapEvery: 3 } });
  expect(Object.keys(spec.environments[0]?.roles as Record<string, string>).sort()).toEqual(["observer", "pioneer"]);
});
