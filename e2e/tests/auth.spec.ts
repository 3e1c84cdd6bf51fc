import { request as httpRequest } from "node:http";
import { expect, test } from "@playwright/test";

/**
 * Who may do what, as people meet it: the administrator (signed in by the global setup) invites a
 * viewer; the viewer accepts the link, sets a password, can watch but not launch. Anonymous
 * visitors are sent to sign-in, and the API, tRPC and live streams answer 401 without a session.
 */

test("an admin invites a viewer, who can watch but not launch", async ({ page, browser, baseURL }) => {
  await page.goto("/settings/users");
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

  // Launching does not: the server refuses (403) and the form says why; no run page opens.
  await card.getByTestId("launch-open").click();
  await card.getByTestId("launch-steps").fill("2");
  await card.getByTestId("launch-submit").click();
  await expect(card.getByTestId("launch-error")).toContainText("needs the editor role");
  expect(viewerPage.url()).not.toMatch(/\/runs\/[^/]+$/);
  const direct = await viewerPage.request.post("/api/trpc/experiment.launch", {
    headers: { origin: baseURL! },
    data: { json: { experimentId: "demo-echo-letter" } },
  });
  expect(direct.status()).toBe(403);

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
