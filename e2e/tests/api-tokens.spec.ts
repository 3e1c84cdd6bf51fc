import { expect, test } from "@playwright/test";

/**
 * API tokens, as a person sets up CI: create a token in the UI (shown once), use it against the real
 * server's REST API (launch a short run from YAML, long-poll until it ends, fetch the CSV), see its
 * "last used" time, revoke it, and see the API refuse it.
 */
test("api tokens: create in the UI, launch and wait over REST, revoke", async ({ page, request }) => {
  await page.goto("/settings/tokens");
  const name = `e2e CI ${Date.now()}`;
  await page.getByTestId("token-name").fill(name);
  await page.getByTestId("token-create").click();
  const token = (await page.getByTestId("token-secret").textContent())?.trim() ?? "";
  expect(token).toMatch(/^troupe_[A-Za-z0-9_-]{43}$/);
  const row = page.getByTestId("token-row").filter({ hasText: name });
  await expect(row.getByTestId("token-last-used")).toHaveText("never");

  const auth = { authorization: `Bearer ${token}` };
  const spec = [
    "specVersion: 1",
    "name: e2e REST run",
    "actors:",
    "  - name: student",
    "    model: { source: tiny, preset: tiny-char-2l }",
    "datasets:",
    "  - name: letters",
    "    source: { kind: builtin, name: echo_letter, size: 64 }",
    "rewards:",
    "  - name: letter_match",
    "    source: { kind: builtin, name: letter_match }",
    "environments:",
    "  - name: echo",
    "    dataset: letters",
    "    actors: [student]",
    "    prompt: { field: prompt, applyChatTemplate: false }",
    "    rewards: [{ reward: letter_match }]",
    "algorithm: { groupSize: 4 }",
    "trainer: { steps: 2, promptsPerStep: 2, episodesPerStep: 1, device: cpu }",
  ].join("\n");
  const created = await request.post("/api/v1/runs", {
    headers: { ...auth, "content-type": "application/yaml", "idempotency-key": `e2e-${Date.now()}` },
    data: spec,
  });
  expect(created.status()).toBe(201);
  const run = (await created.json()) as { id: string; source: string; status: string };
  expect(run.source).toBe("api");
  // Accepted and not yet ended: the runner may have picked the job up before the response was written (seen in CI).
  expect(["queued", "running"]).toContain(run.status);

  let done = false;
  for (let i = 0; i < 6 && !done; i++) {
    const waited = await request.get(`/api/v1/runs/${run.id}/wait?timeout=30`, { headers: auth, timeout: 45_000 });
    expect(waited.status()).toBe(200);
    const body = (await waited.json()) as { done: boolean; run: { status: string } };
    done = body.done;
    if (done) expect(body.run.status).toBe("succeeded");
  }
  expect(done).toBe(true);
  const csv = await request.get(`/api/v1/runs/${run.id}/metrics?format=csv&name=reward/mean`, { headers: auth });
  expect(csv.headers()["content-type"]).toMatch(/^text\/csv/);
  expect((await csv.text()).trimEnd().split("\r\n")).toHaveLength(3);

  // The run page shows what the API launched.
  await page.goto(`/runs/${run.id}`);
  await expect(page.getByTestId("run-status")).toHaveText("succeeded");

  await page.goto("/settings/tokens");
  await expect(row.getByTestId("token-last-used")).not.toHaveText("never");
  await expect(page.getByTestId("token-secret")).toHaveCount(0); // shown once, never again
  page.once("dialog", (dialog) => void dialog.accept());
  await row.getByTestId("token-revoke").click();
  await expect(row.getByTestId("token-status")).toHaveText("revoked");
  const refused = await request.get("/api/v1/runs", { headers: auth });
  expect(refused.status()).toBe(401);
  expect(refused.headers()["content-type"]).toBe("application/problem+json");

  await page.goto("/api/v1/docs");
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Troupe REST API");
  const doc = await request.get("/api/v1/openapi.json");
  expect(((await doc.json()) as { openapi: string }).openapi).toBe("3.1.0");
});
