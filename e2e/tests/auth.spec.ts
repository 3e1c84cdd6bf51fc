import { request as httpRequest } from "node:http";
import { expect, test } from "@playwright/test";

/**
 * Who may do what, as people meet it: the administrator (signed in by the global setup) invites a
 * viewer; the viewer accepts the link, sets a password, can watch but not launch. Anonymous
 * visitors are sent to sign-in, and the API, tRPC and live streams answer 401 without a session.
 */

test("an admin invites a viewer, who can watch but not launch", async ({ page, browser, baseURL }) => {
  await page.goto("/settings/users");
  await expect(page.getByTestId("invite-create")).toBeEnabled(); // hydrated: typing before it would be lost
  const email = `viewer-${Date.now()}@troupe.test`;
  await page.getByTestId("invite-email").fill(email);
  await page.getByTestId("invite-role").selectOption("viewer");
  await page.getByTestId("invite-create").click();
  const link = (await page.getByTestId("invite-link").textContent())?.trim() ?? "";
  expect(link).toMatch(/\/invite\/[A-Za-z0-9_-]{43}$/);
  await expect(page.getByTestId("user-row").filter({ hasText: email }).getByTestId("user-state")).toHaveText("invited");

  // The viewer: a browser of their own, never signed in.
  const viewer = await browser.newContext({ baseURL, storageState: { cookies: [], origins: [] } });
  const viewerPage = await viewer.newPage();
  await viewerPage.goto(new URL(link).pathname);
  await expect(viewerPage.getByTestId("invite-role")).toHaveText("viewer");
  await viewerPage.getByTestId("invite-password").fill("a long viewer password");
  await viewerPage.getByTestId("invite-submit").click();
  await viewerPage.waitForURL((url) => url.pathname === "/");
  await expect(viewerPage.getByTestId("current-role")).toHaveText("viewer");
  await expect(viewerPage.getByText("Users", { exact: true })).toHaveCount(0);

  // Watching works: the dashboard lists the demo experiment and the runs table loads.
  const card = viewerPage.getByTestId("experiment-card").first();
  await expect(card).toBeVisible();
  const runsBefore = await viewerPage.request.get("/api/trpc/run.list?input=" + encodeURIComponent(JSON.stringify({ json: {} })));
  expect(runsBefore.status()).toBe(200);

  // Launching does not: the button is disabled with the reason in words, and the server refuses (403)
  // with the same sentence, so a request made anyway reads the same; no run page opens.
  await expect(card.getByTestId("launch-open")).toBeDisabled();
  await expect(card.getByTestId("launch-refused")).toHaveText("Viewers cannot launch runs: ask an editor or admin");
  const direct = await viewerPage.request.post("/api/trpc/experiment.launch", {
    headers: { origin: baseURL! },
    data: { json: { experimentId: "demo-echo-letter" } },
  });
  expect(direct.status()).toBe(403);
  const refusal = ((await direct.json()) as { error: { json: { message: string } } }).error.json.message;
  expect(refusal).toBe("Viewers cannot launch runs: ask an editor or admin");

  // On a run page (a run the admin launched and cancelled), Re-run, Clone and Delete are disabled for
  // the viewer, each with the reason, before any click.
  const launched = await page.request.post("/api/trpc/experiment.launch", { data: { json: { experimentId: "demo-echo-letter", overrides: { steps: 1 } } } });
  expect(launched.ok(), await launched.text()).toBe(true);
  const runId = ((await launched.json()) as { result: { data: { json: { runId: string } } } }).result.data.json.runId;
  expect((await page.request.post("/api/trpc/run.cancel", { data: { json: { runId } } })).ok()).toBe(true);
  await viewerPage.goto(`/runs/${runId}`);
  await expect(viewerPage.getByTestId("run-status")).toHaveText(/cancelled|succeeded|failed/, { timeout: 60_000 });
  await expect(viewerPage.getByTestId("run-rerun")).toBeDisabled();
  await expect(viewerPage.getByTestId("run-rerun")).toHaveAttribute("title", "Viewers cannot re-run runs: ask an editor or admin");
  await expect(viewerPage.getByTestId("run-clone-spec")).toBeDisabled();
  await expect(viewerPage.getByTestId("run-clone-spec")).toHaveAttribute("title", "Viewers cannot clone a run's spec into an experiment: ask an editor or admin");
  await expect(viewerPage.getByTestId("run-delete")).toBeDisabled();
  await expect(viewerPage.getByTestId("run-delete")).toHaveAttribute("title", "Viewers cannot delete runs: ask an editor or admin");
  await expect(viewerPage.getByTestId("run-role-note")).toContainText("Viewers cannot delete runs: ask an editor or admin");
  await expect(viewerPage.getByTestId("run-collect")).toBeDisabled();
  await expect(viewerPage.getByTestId("run-collect")).toHaveAttribute("title", "Viewers cannot collect datasets from runs: ask an editor or admin");
  await expect(viewerPage.getByTestId("run-resume-checkpoint-wrap")).toHaveAttribute("title", "Viewers cannot resume runs from a checkpoint: ask an editor or admin");
  if (process.env.TROUPE_E2E_SCREENSHOTS) await viewerPage.screenshot({ path: `${process.env.TROUPE_E2E_SCREENSHOTS}/viewer-run-page.png` });
  // The admin, on the same page, has them enabled.
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId("run-delete")).toBeEnabled();
  await page.goto("/settings/users");

  // The admin disables the viewer: their session stops working at once.
  await page.getByTestId("user-row").filter({ hasText: email }).getByTestId("user-disable").click();
  await expect(page.getByTestId("user-row").filter({ hasText: email }).getByTestId("user-state")).toHaveText("disabled");
  await viewerPage.goto("/runs");
  await viewerPage.waitForURL(/\/sign-in/);
  await viewer.close();
});

test("anonymous visitors are sent to sign-in; tRPC, REST and live streams answer 401; the sign-in form signs in and out", async ({ browser, baseURL }) => {
  const anonymous = await browser.newContext({ baseURL, storageState: { cookies: [], origins: [] } });
  const page = await anonymous.newPage();
  for (const path of ["/", "/runs", "/designer/rewards", "/settings/tokens", "/settings/users"]) {
    await page.goto(path);
    await page.waitForURL(/\/sign-in\?next=/);
  }
  await expect(page.getByTestId("sign-in-form")).toBeVisible();
  const api = anonymous.request;
  expect((await api.get("/api/trpc/run.list?input=" + encodeURIComponent(JSON.stringify({ json: {} })))).status()).toBe(401);
  expect((await api.post("/api/trpc/reward.test", { data: { json: {} } })).status()).toBe(401);
  expect((await api.post("/api/trpc/token.create", { data: { json: { name: "x" } } })).status()).toBe(401);
  expect((await api.get("/api/runs/anything/events")).status()).toBe(401);
  expect((await api.get("/api/v1/runs")).status()).toBe(401);
  expect((await api.get("/api/v1/health")).status()).toBe(200);

  // A wrong password says so, and does not sign in.
  await page.getByTestId("sign-in-email").fill("e2e-admin@troupe.test");
  await page.getByTestId("sign-in-password").fill("not the password");
  await page.getByTestId("sign-in-submit").click();
  await expect(page.getByTestId("sign-in-error")).toContainText("Wrong email or password");

  // The right one signs in through the form and returns to the page first asked for.
  await page.getByTestId("sign-in-email").fill(process.env.TROUPE_ADMIN_EMAIL!);
  await page.getByTestId("sign-in-password").fill(process.env.TROUPE_ADMIN_PASSWORD!);
  await page.getByTestId("sign-in-submit").click();
  await page.waitForURL((url) => url.pathname === "/settings/users");
  await expect(page.getByTestId("current-role")).toHaveText("admin");
  const cookie = (await anonymous.cookies()).find((c) => c.name === "troupe_session");
  expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Lax" });

  // Signing out ends it: the next page is the sign-in form again.
  await page.getByTestId("sign-out").click();
  await page.waitForURL(/\/sign-in/);
  await page.goto("/runs");
  await page.waitForURL(/\/sign-in\?next=/);
  await anonymous.close();
});

test("pages carry a nonce CSP that forbids framing; a foreign Host (DNS rebinding) and a cross-origin write are refused", async ({ page, request, baseURL }) => {
  const response = await page.goto("/");
  const csp = response!.headers()["content-security-policy"] ?? "";
  expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/);
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).not.toContain("unsafe-eval");
  expect(response!.headers()["x-frame-options"]).toBe("DENY");
  expect(response!.headers()["x-content-type-options"]).toBe("nosniff");
  // The page still runs (scripts carry the nonce): the dashboard's data arrives through tRPC.
  await expect(page.getByTestId("experiment-card").first()).toBeVisible();

  const url = new URL(baseURL!);
  const rebinding = await new Promise<number>((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path: "/api/v1/health", headers: { host: `attacker.example:${url.port}` } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
  expect(rebinding).toBe(421);

  const crossOrigin = await request.post("/api/trpc/token.create", { headers: { origin: "http://attacker.example" }, data: { json: { name: "csrf" } } });
  expect(crossOrigin.status()).toBe(403);
});
