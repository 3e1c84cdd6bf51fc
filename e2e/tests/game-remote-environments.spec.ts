import { expect, test, type APIRequestContext } from "@playwright/test";

/**
 * The Environments page offers the board-game and remote kinds (#17) with their settings; each is
 * refused in words until it is complete and saves once it is. A remote environment takes an http:// or a
 * grpc://host:port url; the latter with a note of what the runner needs.
 */

const suffix = Date.now().toString(36);

async function createActor(request: APIRequestContext, name: string) {
  const response = await request.post("/api/trpc/part.create", {
    data: { json: { kind: "actor", spec: { name, model: { source: "tiny" } }, description: "" } },
  });
  expect(response.ok(), await response.text()).toBe(true);
}

test("environments: a board game and a remote environment, each with its settings, save", async ({ page, request }) => {
  const player = `Player_${suffix}`;
  await createActor(request, player);
  const nav = page.getByRole("navigation", { name: "Environments" });

  await page.goto("/designer/environments");
  await page.getByLabel("Name", { exact: true }).fill(`ttt_${suffix}`);
  await page.getByLabel("Kind", { exact: true }).selectOption("game");
  await expect(page.getByTestId("env-kind-note")).toContainText("an illegal move forfeits");
  await expect(page.getByTestId("game-fields")).toBeVisible();
  await page.getByLabel("Game", { exact: true }).selectOption("connect_four");
  await page.getByLabel("Reward per legal move").fill("0.2");
  // Every board game lists its legal moves when asked (connect-four: column numbers), not chess alone.
  await page.getByRole("checkbox", { name: "List the legal moves under every board (cell or column numbers)" }).check();
  await page.getByRole("checkbox", { name: player }).check();
  await page.getByLabel("Dataset", { exact: true }).selectOption("echo_letter");
  // No reward is needed: the game scores its episodes.
  await expect(page.getByTestId("env-local-issues")).toHaveCount(0);
  await page.getByTestId("env-save").click();
  await expect(nav.getByRole("button", { name: new RegExp(`ttt_${suffix}`) })).toBeVisible();

  await page.getByTestId("env-new").click();
  await page.getByLabel("Name", { exact: true }).fill(`remote_${suffix}`);
  await page.getByLabel("Kind", { exact: true }).selectOption("remote");
  await expect(page.getByTestId("remote-fields")).toBeVisible();
  await page.getByRole("checkbox", { name: player }).check();
  await page.getByLabel("Dataset", { exact: true }).selectOption("echo_letter");
  await page.getByLabel("URL").fill("http://envhost:8100");
  await page.getByLabel("Failure score").fill("-1");
  await expect(page.getByTestId("env-local-issues")).toHaveCount(0);
  await expect(page.getByTestId("remote-grpc-note")).toHaveCount(0);
  // gRPC: host:port only, and the note says what the runner needs.
  await page.getByLabel("URL").fill("grpc://envhost:8101/env");
  await expect(page.getByTestId("env-local-issues")).toContainText("url: must be an http:// or https:// URL, or grpc://host:port");
  await page.getByLabel("URL").fill("grpc://envhost:8101");
  await expect(page.getByTestId("env-local-issues")).toHaveCount(0);
  await expect(page.getByTestId("remote-grpc-note")).toContainText("grpcio and protobuf");
  await page.getByTestId("env-save").click();
  await expect(nav.getByRole("button", { name: new RegExp(`remote_${suffix}`) })).toBeVisible();
});
