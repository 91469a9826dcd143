// The studio's look, every page walked in Chromium against a real `llmtool serve`: the header
// fits a phone's width, every page is axe clean in the dark theme as in the light, no page text
// holds a literal backtick or a command-line hint, a member's empty pages say what to do, and a
// member never sees an admin's page (the "admins only" page, status 404); and every model the
// model picker offers runs.
//
// Run by the test command after `cargo build`: node --test web/tests/
// LLMTOOL_BLESS=1 writes the screenshot into docs/studio/ (else into target/studio/).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { violations } from "./axe.mjs";
import { launchChromium } from "./browser.mjs";
import { cli as runCli, openPage, start as startProgram } from "./harness.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const buildDir = process.env.LLMTOOL_BUILD_DIR ?? join(root, "target", "debug");
const llmtool = join(buildDir, "llmtool");
const mockLlm = join(buildDir, "mock-llm");
const screenshots = process.env.LLMTOOL_BLESS ? join(root, "docs", "studio") : join(root, "target", "studio");
const work = mkdtempSync(join(tmpdir(), "llmtool-look-test-"));
const data = join(work, "data");
const children = [];
const tokens = {};
let base;
let browser;

const start = (...args) => startProgram(children, ...args);
const cli = (...args) => runCli(llmtool, data, ...args);

/** The pages a member may open, and those only an admin may. */
const MEMBER_PAGES = ["/", "/t/teach-me-anything", "/control/spend", "/control/budgets", "/control/prices", "/tokens", "/device"];
const ADMIN_PAGES = ["/people", "/teams", "/control/integrations", "/control/curate", "/control/audit"];

before(async () => {
  const [mockUrl] = await start(mockLlm, ["127.0.0.1:0"], { MOCK_LLM_ANSWER: "The Moon pulls the sea." }, /http:\/\/127\.0\.0\.1:\d+/);
  const config = join(work, "config.toml");
  writeFileSync(config, `[providers.mock]\napi = "openai"\nbase_url = "${mockUrl}/v1"\napi_key_env = "MOCK_KEY"\nmodels = ["m", "m2"]\n\n[prices."mock/m"]\ninput = 1.0\noutput = 2.0\n`);
  tokens.viewer = cli("token", "create", "vic", "--role", "viewer");
  tokens.admin = cli("token", "create", "ada", "--role", "admin");
  const env = { LLMTOOL_DATA_DIR: data, LLMTOOL_NO_LOG: "1", MOCK_KEY: "mock-secret-key-5150" };
  const [, address] = await start(llmtool, ["serve", "--listen", "127.0.0.1:0", "--config", config], env, /llmtool serve: http:\/\/([\d.:]+)\/api\/v1/);
  base = `http://${address}`;
  browser = await launchChromium();
  mkdirSync(screenshots, { recursive: true });
});

after(async () => {
  await browser?.close();
  for (const child of children) child.kill("SIGKILL");
});

/** A signed-in page as `who`, in a context of `options` (a viewport, a colour scheme). */
function signedIn(who, options = {}) {
  return openPage(browser, base, tokens[who], { bypassCSP: true, ...options });
}

/** Opens `path` and waits until the page has drawn itself (the status line or main has text). */
async function open(page, path) {
  const response = await page.goto(`${base}${path}`);
  await page.waitForLoadState("networkidle");
  return response;
}

test("a member's empty pages say what to do, and an admin's pages are not theirs", async () => {
  const { page, context, problems } = await signedIn("viewer");
  await open(page, "/control/spend");
  await page.locator("#days-chart .empty", { hasText: "No runs yet" }).waitFor();
  assert.equal(await page.locator("main svg:visible").count(), 0, "no blank chart");
  await open(page, "/t/teach-me-anything");
  await page.locator("#runs", { hasText: "No runs yet" }).waitFor();
  for (const path of ADMIN_PAGES) {
    const response = await open(page, path);
    assert.equal(response.status(), 404, path);
    await page.locator("h1", { hasText: "Admins only" }).waitFor();
    assert.equal(await page.locator("main form, main table").count(), 0, `${path}: nothing of the page`);
  }
  assert.deepEqual(problems, []);
  await context.close();
});

test("no page text holds a literal backtick or a command-line hint", async () => {
  for (const [who, pages] of [["viewer", MEMBER_PAGES], ["admin", [...MEMBER_PAGES, ...ADMIN_PAGES]]]) {
    const { page, context, problems } = await signedIn(who);
    for (const path of pages) {
      await open(page, path);
      const text = await page.locator("body").innerText();
      assert.doesNotMatch(text, /`/, `${who} ${path}`);
      assert.doesNotMatch(text, /(^|\s)--[a-z]|llmtool (?:admin|check|integration|member|model|run|sandbox|serve|team|token)\b|\[server\./, `${who} ${path}`);
    }
    assert.deepEqual(problems, [], who);
    await context.close();
  }
});

test("the header fits a phone, and every page is axe clean in dark as in light", async () => {
  const phone = await signedIn("admin", { viewport: { width: 375, height: 740 } });
  for (const path of [...MEMBER_PAGES, ...ADMIN_PAGES]) {
    await open(phone.page, path);
    const [wide, screen] = await phone.page.evaluate(() => [document.querySelector("header").scrollWidth, document.documentElement.clientWidth]);
    assert.ok(wide <= screen, `${path}: the header is ${wide} px wide on a ${screen} px screen`);
  }
  await open(phone.page, "/");
  await phone.page.screenshot({ path: join(screenshots, "phone.png") });
  await phone.context.close();

  for (const colorScheme of ["light", "dark"]) {
    const { page, context } = await signedIn("admin", { colorScheme });
    for (const path of [...MEMBER_PAGES, ...ADMIN_PAGES]) {
      await open(page, path);
      assert.deepEqual(await violations(page, "main h1"), [], `${colorScheme} ${path}`);
    }
    if (colorScheme === "dark") {
      await open(page, "/t/teach-me-anything");
      await page.screenshot({ path: join(screenshots, "dark.png"), fullPage: true });
    }
    await context.close();
  }
});

test("every model the picker offers runs", async () => {
  const { page, context, problems } = await signedIn("viewer");
  await open(page, "/t/teach-me-anything");
  const picker = page.getByLabel("Model", { exact: true });
  // The provider's models; the local model, which the test command's machine has too, runs in
  // tests of its own (a run of it here would take most of a minute).
  const offered = (await picker.locator("option").evaluateAll((options) => options.map((o) => o.value))).filter((id) => id.startsWith("mock/"));
  assert.deepEqual([...offered].sort(), ["mock/m", "mock/m2"], "both of the provider's models are offered");
  await page.getByLabel(/^topic/).fill("tides");
  for (const model of offered) {
    await picker.selectOption(model);
    await page.getByRole("button", { name: "Run" }).click();
    await page.locator("#output .facts", { hasText: `${model}` }).locator(".outcome").waitFor({ timeout: 30_000 });
    assert.equal(await page.locator("#output .outcome").first().textContent(), "ok", `${model} was offered, then refused`);
    await page.goto(`${base}/t/teach-me-anything`);
    await page.getByLabel(/^topic/).fill("tides");
  }
  assert.deepEqual(problems, []);
  await context.close();
});
