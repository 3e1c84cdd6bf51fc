import { expect, test } from "@playwright/test";

/**
 * A list still loading when a person writes to it shows the write once both answer. Found by CI: on a cold
 * server the token list's first request was still running when the token was created; react-query joined that
 * request (sent before the write) instead of refetching, and the page said "No tokens yet." under the new
 * token. Here the list's first answer is held until the page has handled the create, which makes the race certain.
 */
test("a token created while the token list is still loading appears in the list", async ({ page }) => {
  let release!: () => void;
  const createShown = new Promise<void>((resolve) => (release = resolve));
  let firstList = true;
  await page.route("**/api/trpc/token.list**", async (route) => {
    if (!firstList) return route.continue();
    firstList = false;
    const answer = await route.fetch(); // what the server said before the token existed
    await createShown;
    // The fixed page has cancelled this request by now (and asked again); the browser may have dropped it.
    await route.fulfill({ response: answer }).catch(() => undefined);
  });

  await page.goto("/settings/tokens");
  const name = `while loading ${Date.now()}`;
  await page.getByTestId("token-name").fill(name);
  await page.getByTestId("token-create").click();
  // The page has handled the create (it shows the secret, then refetches the list): only now may the list's
  // first answer, from before the token existed, arrive.
  await expect(page.getByTestId("token-secret")).toBeVisible();
  release();
  await expect(page.getByTestId("token-row").filter({ hasText: name })).toHaveCount(1);
});
