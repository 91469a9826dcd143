// A tool's functions in the studio, in Chromium against a real `llmtool serve` on the mock
// provider scripted to call one: the call shows in the run's thread as it happens, with its
// arguments and (folded) its result, a refused call marked as failed; and the conversation,
// opened again, shows the same call with its turn.
//
// Run by the test command after `cargo build`: node --test web/tests/

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
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
const work = mkdtempSync(join(tmpdir(), "llmtool-functions-test-"));
const data = join(work, "data");
const children = [];
let base;
let browser;
let admin;

/** The call the mock makes of a request that offers functions: the metadata service. */
const CALL = { name: "fetch_url", arguments: { url: "http://169.254.169.254/latest/meta-data/" } };

/** A tool that reads pages, on the mock's model. */
const READER = {
  model_prompt: "Summarize the page at {{url}}.",
  metadata: {
    prompt_name: "Page reader",
    description: "Reads a page and summarizes it.",
    model_version: ["mock/m"],
    variables: [{ name: "url", type: "text", description: "The page's address." }],
    functions: [{ builtin: "fetch_url" }],
  },
};

const start = (...args) => startProgram(children, ...args);
const cli = (...args) => runCli(llmtool, data, ...args);

before(async () => {
  const mockEnv = { MOCK_LLM_CALL: JSON.stringify(CALL), MOCK_LLM_ANSWER: "The page could not be read." };
  const [mockUrl] = await start(mockLlm, ["127.0.0.1:0"], mockEnv, /http:\/\/127\.0\.0\.1:\d+/);
  const config = join(work, "config.toml");
  writeFileSync(config, `[providers.mock]\napi = "openai"\nbase_url = "${mockUrl}/v1"\napi_key_env = "MOCK_KEY"\n\n[prices."mock/m"]\ninput = 1.0\noutput = 2.0\n`);
  admin = cli("token", "create", "ada", "--role", "admin");
  const env = { LLMTOOL_DATA_DIR: data, LLMTOOL_NO_LOG: "1", MOCK_KEY: "mock-secret-key-5150" };
  const [, address] = await start(llmtool, ["serve", "--listen", "127.0.0.1:0", "--config", config], env, /llmtool serve: http:\/\/([\d.:]+)\/api\/v1/);
  base = `http://${address}`;
  const made = await fetch(`${base}/api/v1/tools?slug=page-reader`, { method: "POST", headers: { authorization: `Bearer ${admin}` }, body: JSON.stringify(READER) });
  assert.equal(made.status, 201, await made.text());
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  for (const child of children) child.kill("SIGKILL");
});

test("a function call shows in the thread as it runs, and again when the conversation is opened", async () => {
  const { page, problems } = await openPage(browser, base, admin, { bypassCSP: true });
  await page.goto(`${base}/t/page-reader`);
  await page.getByLabel(/^url/).fill("the menu");
  await page.getByLabel("Model", { exact: true }).selectOption("mock/m");
  await page.getByRole("button", { name: "Run" }).click();
  await page.locator("#output .outcome.ok").waitFor({ timeout: 30_000 });

  const calls = page.locator("#output .calls .call");
  assert.equal(await calls.count(), 1);
  const call = calls.first();
  assert.match(await call.locator("summary").textContent(), /^fetch_url \{"url":"http:\/\/169\.254\.169\.254\/latest\/meta-data\/"\}$/);
  assert.ok(await call.evaluate((item) => item.classList.contains("failed")), "a refused call is marked failed");
  await call.locator("summary").click();
  assert.match(await call.locator(".call-result").textContent(), /link-local address .* which fetch_url may not reach/);
  assert.match(await page.locator("#output .answer").first().textContent(), /The page could not be read\./);
  assert.deepEqual(await violations(page, "#output .calls"), []);

  // The conversation, opened again, keeps the call with its turn.
  await page.waitForURL(/\/c\/[0-9a-z]+$/);
  await page.reload();
  const kept = page.locator(".calls .call");
  await kept.first().waitFor();
  assert.equal(await kept.count(), 1);
  assert.match(await kept.first().locator("summary").textContent(), /^fetch_url /);
  await kept.first().locator("summary").click();
  assert.match(await kept.first().locator(".call-result").textContent(), /link-local/);
  assert.deepEqual(problems, []);
});
