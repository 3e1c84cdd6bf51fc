import { expect, test } from "@playwright/test";
import { createPart, tinyStudent } from "./compose";

/**
 * The Environments page's template previews under the production build's CSP (no 'unsafe-eval'). The
 * previous preview library compiled templates with `new Function`, which the CSP blocks: every preview
 * said "Does not render: EvalError" and no browser test had looked at the page with the real CSP.
 */

const suffix = Date.now().toString(36);
const shotDir = process.env.TROUPE_E2E_SCREENSHOTS;

test("template preview: prompt and system prompt render under the production CSP, a missing field is named", async ({ page, request }) => {
  const actor = `csp_actor_${suffix}`;
  await createPart(request, "actor", tinyStudent(actor));
  const violations: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy|unsafe-eval|EvalError/i.test(m.text())) violations.push(m.text());
  });

  const response = await page.goto("/designer/environments");
  const csp = response?.headers()["content-security-policy"] ?? "";
  expect(csp).toContain("script-src");
  expect(csp).not.toContain("unsafe-eval");

  await page.getByLabel("Name", { exact: true }).fill(`csp_env_${suffix}`);
  await page.getByLabel("Dataset", { exact: true }).selectOption("echo_letter");
  await page.getByRole("checkbox", { name: actor }).check();

  await page.getByRole("textbox", { name: "Prompt template" }).focus();
  await page.keyboard.type("Say {{ letter | upper }}{% if prompt %} ({{ prompt }}){% endif %}");
  const previews = page.getByTestId("template-preview");
  await expect(previews.first()).toContainText("Renders on the sample row as:");
  await expect(previews.first()).toContainText("Say K (say k:)");

  await page.getByRole("textbox", { name: `System prompt for ${actor}` }).focus();
  await page.keyboard.type("Plain text, {{ missing }}");
  await expect(previews.nth(1)).toContainText("Does not render:");
  await expect(previews.nth(1)).toContainText("'missing' is undefined");
  await expect(page.getByText(/EvalError|unsafe-eval/)).toHaveCount(0);
  if (shotDir) await page.screenshot({ path: `${shotDir}/template-preview-csp.png`, fullPage: true });
  expect(violations).toEqual([]);
});
