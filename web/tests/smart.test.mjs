// Smart tools in the studio, in Chromium against a real `llmtool serve --smart-tools` whose
// sandbox runs the tool's Python and whose `llm()` calls go to the scripted mock provider: the
// gallery marks the tool as smart, its page shows the code instead of a prompt, a run shows
// the result, what the code printed and its calls, and a failure names its line of the code.
//
// Run by the test command after `cargo build` and `llmtool sandbox pull`
// (`LLMTOOL_SANDBOX_DIR`): node --test web/tests/
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
// The binaries the test command built (LLMTOOL_BUILD_DIR), else the dev build.
const buildDir = process.env.LLMTOOL_BUILD_DIR ?? join(root, "target", "debug");
const llmtool = join(buildDir, "llmtool");
const mockLlm = join(buildDir, "mock-llm");
const screenshots = process.env.LLMTOOL_BLESS ? join(root, "docs", "studio") : join(root, "target", "studio");
const work = mkdtempSync(join(tmpdir(), "llmtool-smart-test-"));
const data = join(work, "data");
const children = [];
const tokens = {};
let base;
let browser;

const CODE = `def execute(variables):
    text = variables["text"]
    if not text.strip():
        raise ValueError("there is no text to count")
    words = len(text.split())
    print("counted", words, "words")
    summary = llm("Sum up in one sentence: " + text)
    return f"{words} words.\\n{summary}"
`;

const TOOL = {
  version: "0.1",
  metadata: {
    tool_name: "Word stats",
    tool_code: CODE,
    description: "Counts the words of a text, and asks a model to sum it up.",
    model_version: ["mock/m"],
    expected_output: "text",
    timestamp: "2026-11-27T00:00:00Z",
    variables: [{ name: "text", description: "The text to count." }],
  },
};

const start = (...args) => startProgram(children, ...args);
const cli = (...args) => runCli(llmtool, data, ...args);

before(async () => {
  const [mockUrl] = await start(mockLlm, ["127.0.0.1:0"], { MOCK_LLM_ANSWER: "The text is short." }, /http:\/\/127\.0\.0\.1:\d+/);
  const config = join(work, "config.toml");
  writeFileSync(config, `[providers.mock]\napi = "openai"\nbase_url = "${mockUrl}/v1"\napi_key_env = "MOCK_KEY"\n\n[prices."mock/m"]\ninput = 1.0\noutput = 2.0\n`);
  tokens.editor = cli("token", "create", "ana", "--role", "editor");
  tokens.viewer = cli("token", "create", "vic", "--role", "viewer");
  const env = { LLMTOOL_DATA_DIR: data, LLMTOOL_NO_LOG: "1", MOCK_KEY: "mock-secret-key-5150" };
  const [, address] = await start(llmtool, ["serve", "--listen", "127.0.0.1:0", "--smart-tools", "--config", config], env, /llmtool serve: http:\/\/([\d.:]+)\/api\/v1/);
  base = `http://${address}`;
  const published = await fetch(`${base}/api/v1/tools?slug=word-stats`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.editor}`, "content-type": "application/json" },
    body: JSON.stringify(TOOL),
  });
  assert.equal(published.status, 201, await published.text());
  browser = await launchChromium();
  mkdirSync(screenshots, { recursive: true });
});

after(async () => {
  await browser?.close();
  for (const child of children) child.kill("SIGKILL");
});

function page(signedInAs, options) {
  return openPage(browser, base, tokens[signedInAs], options);
}

test("a smart tool is marked in the gallery, shows its code, runs in the sandbox, and names the line that failed", async () => {
  const { page: opened, context, problems } = await page("viewer");
  await opened.getByLabel("Search the library").fill("word stats");
  const card = opened.locator(".card").filter({ hasText: "Word stats" });
  assert.equal(await card.locator(".kind.smart").textContent(), "smart");
  assert.equal(await opened.locator(".card .kind.smart").count(), 1, "only the smart tool is marked");

  await opened.goto(`${base}/t/word-stats`);
  await opened.locator("#tool-code").filter({ hasText: "def execute(variables):" }).waitFor();
  assert.equal(await opened.locator("#rendered").count(), 0, "a smart tool has no prompt to render");
  assert.equal(await opened.getByRole("heading", { name: "Compare models" }).count(), 0);
  assert.equal(await opened.locator("h1 .kind.smart").textContent(), "smart");

  await opened.getByLabel(/^text/).fill("tides turn twice daily");
  await opened.getByLabel("Model for the code's llm() calls").selectOption("mock/m");
  await opened.getByRole("button", { name: "Run" }).click();
  await opened.locator("#output .outcome.ok").waitFor({ timeout: 60_000 });
  assert.match(await opened.locator("#output .answer").textContent(), /^4 words\.\s*The text is short\./);
  // Each line the code gave back is a line on the page (not run together as Markdown would).
  assert.equal(await opened.locator("#output .answer br").count(), 1);
  const facts = await opened.locator("#output .facts").textContent();
  assert.match(facts, /sandbox\/python-3\.12 · 1 llm\(\) call · \$0\.0000/);
  await opened.locator("#output details.printed summary").click();
  assert.match(await opened.locator("#output details.printed pre").textContent(), /^counted 4 words\n/);
  // The runs table has the sandbox run and its call on the model.
  await opened.locator("#runs tbody tr").nth(1).waitFor();
  const models = await opened.locator("#runs tbody tr td:nth-child(3)").allTextContents();
  assert.deepEqual([...models].sort(), ["mock/m", "sandbox/python-3.12"]);
  await opened.screenshot({ path: join(screenshots, "smart-tool.png"), fullPage: true });

  await opened.getByLabel(/^text/).fill("   ");
  await opened.getByRole("button", { name: "Run" }).click();
  await opened.locator("#output .outcome.failed").waitFor({ timeout: 60_000 });
  const failed = await opened.locator("#output .facts").textContent();
  assert.match(failed, /ValueError: there is no text to count \(line 4 of the code\)/);
  assert.deepEqual(problems, []);
  await context.close();

  const audit = await page("viewer", { bypassCSP: true });
  await audit.page.goto(`${base}/t/word-stats`);
  assert.deepEqual(await violations(audit.page, "#tool-code"), []);
  await audit.context.close();
});
