// A conversation in the studio, in Chromium against a real `llmtool serve` on the scripted
// mock provider: a run's answer becomes a thread, a follow-up streams under it, answers read
// as Markdown with no HTML from the model ever parsed, copy buttons copy, and a share link
// shows a read-only snapshot to another member (and nothing to a caller who is none); an image
// tool's picture shows in its answer, its run history and its snapshot, and to nobody else.
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
// The binaries the test command built (LLMTOOL_BUILD_DIR), else the dev build.
const buildDir = process.env.LLMTOOL_BUILD_DIR ?? join(root, "target", "debug");
const llmtool = join(buildDir, "llmtool");
const mockLlm = join(buildDir, "mock-llm");
const screenshots = process.env.LLMTOOL_BLESS ? join(root, "docs", "studio") : join(root, "target", "studio");
const work = mkdtempSync(join(tmpdir(), "llmtool-conversation-test-"));
const data = join(work, "data");
const children = [];
const tokens = {};
let base;
let browser;

/** What the mock answers every request: Markdown, a link that must not become one, raw HTML. */
const ANSWER = "Tides come from the **Moon**. Try `tide --now` then: \n\n```\necho high\n```\n\n- first\n- second\n\nSee [the notes](javascript:alert(1)) and <img src=x onerror=alert(1)> here, AT&T &#169;.";

const start = (...args) => startProgram(children, ...args);
const cli = (...args) => runCli(llmtool, data, ...args);

before(async () => {
  const [mockUrl] = await start(mockLlm, ["127.0.0.1:0"], { MOCK_LLM_ANSWER: ANSWER }, /http:\/\/127\.0\.0\.1:\d+/);
  const config = join(work, "config.toml");
  // `mock/gpt-image-1` is priced, so the model picker offers it: the built-in Image Generator
  // runs on the mock's images API.
  writeFileSync(config, `[providers.mock]\napi = "openai"\nbase_url = "${mockUrl}/v1"\napi_key_env = "MOCK_KEY"\n\n[prices."mock/m"]\ninput = 1.0\noutput = 2.0\n\n[prices."mock/gpt-image-1"]\ninput = 5.0\noutput = 40.0\n`);
  tokens.owner = cli("token", "create", "vic", "--role", "viewer");
  tokens.other = cli("token", "create", "wes", "--role", "viewer");
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

function page(signedInAs, options) {
  return openPage(browser, base, signedInAs && tokens[signedInAs], options);
}

test("a run's answer becomes a thread: a follow-up streams under it as safe Markdown, copies, and shares read-only", async () => {
  const { page: opened, context, problems } = await page("owner");
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  let alerted = false;
  opened.on("dialog", async (dialog) => {
    alerted = true;
    await dialog.dismiss();
  });
  await opened.goto(`${base}/t/teach-me-anything`);
  await opened.getByLabel(/^topic/).fill("tides");
  await opened.getByLabel("Model", { exact: true }).selectOption("mock/m");
  await opened.getByRole("button", { name: "Run" }).click();
  await opened.locator("#output .outcome.ok").waitFor({ timeout: 30_000 });

  // The answer as Markdown: emphasis, code, a list; the model's HTML stays text and its
  // script link is no link.
  const first = opened.locator("#output .answer").first();
  assert.equal(await first.locator("strong").textContent(), "Moon");
  assert.equal(await first.locator("li").count(), 2);
  assert.equal(await first.locator("img").count(), 0, "no element from the model's HTML");
  assert.match(await first.textContent(), /<img src=x onerror=alert\(1\)> here, AT&T ©\./);
  assert.equal(await first.locator('a[href^="javascript"]').count(), 0);

  await opened.getByRole("button", { name: "Copy answer" }).first().click();
  assert.match(await opened.evaluate(() => navigator.clipboard.readText()), /^Tides come from the \*\*Moon\*\*/);
  await opened.getByRole("button", { name: "Copy code" }).first().click();
  assert.equal(await opened.evaluate(() => navigator.clipboard.readText()), "echo high");

  await opened.getByLabel("Ask a follow-up").fill("Why the Moon?");
  await opened.getByRole("button", { name: "Ask" }).click();
  const turn = opened.locator(".thread .turn").first();
  await turn.locator(".outcome.ok").waitFor({ timeout: 30_000 });
  assert.equal(await turn.locator(".asked-text").textContent(), "Why the Moon?");
  assert.equal(await turn.locator(".answer strong").textContent(), "Moon");
  assert.match(await turn.locator(".facts").textContent(), /mock\/m/);
  await opened.screenshot({ path: join(screenshots, "conversation.png"), fullPage: true });

  await opened.getByRole("button", { name: "Share" }).click();
  const link = await opened.getByLabel("Share link").inputValue();
  assert.match(link, new RegExp(`^${base}/share/[0-9a-f]{64}$`));
  assert.deepEqual(problems, []);
  assert.equal(alerted, false, "nothing the model wrote ran");

  // Another member reads the snapshot, and cannot ask in it; a caller who is no member sees
  // nothing of it.
  const other = await page("other", { bypassCSP: true });
  await other.page.goto(link);
  await other.page.locator(".thread .turn").nth(1).waitFor();
  assert.equal(await other.page.locator(".thread .turn").count(), 2);
  assert.match(await other.page.locator(".facts").first().textContent(), /read-only/);
  assert.equal(await other.page.getByLabel("Ask a follow-up").count(), 0);
  assert.deepEqual(await violations(other.page, ".thread .turn"), []);
  assert.deepEqual(other.problems, []);
  await other.context.close();
  const stranger = await page(null);
  await stranger.page.goto(link);
  await stranger.page.getByText("to read this conversation").waitFor();
  assert.equal(await stranger.page.locator(".turn").count(), 0);
  await stranger.context.close();
  await context.close();
});

test("an image tool's picture shows in its answer, in the runs and in a shared snapshot, and is nobody else's", async () => {
  const { page: opened, context, problems } = await page("owner");
  await opened.goto(`${base}/t/image-generator`);
  await opened.getByLabel(/^subject/).fill("a lighthouse in a storm");
  await opened.getByLabel("Model", { exact: true }).selectOption("mock/gpt-image-1");
  await opened.getByRole("button", { name: "Run" }).click();
  await opened.locator("#output .outcome.ok").waitFor({ timeout: 30_000 });
  const picture = opened.locator("#output .pictures img").first();
  await opened.waitForFunction(() => document.querySelector("#output .pictures img")?.naturalWidth > 0);
  assert.deepEqual(await picture.evaluate((img) => [img.naturalWidth, img.naturalHeight]), [1024, 1024]);
  assert.match(await picture.getAttribute("alt"), /1024×1024 png/);
  assert.match(await opened.locator("#output .answer").first().textContent(), /1024x1024 png sha256:[0-9a-f]{64}/);
  assert.equal(await opened.getByLabel("Ask a follow-up").count(), 0, "an image tool's run has no follow-ups");
  // Each picture downloads as a file named for its run and place.
  const [download] = await Promise.all([opened.waitForEvent("download"), opened.getByRole("link", { name: "Download picture 1" }).click()]);
  assert.match(download.suggestedFilename(), /^picture-\d+-1\.png$/);
  // The run history shows it too, as a thumbnail.
  await opened.waitForFunction(() => document.querySelector("#runs .pictures img")?.naturalWidth === 1024);
  const address = await picture.getAttribute("src");
  assert.equal(await opened.locator("#runs .pictures img").first().getAttribute("src"), address);
  await opened.screenshot({ path: join(screenshots, "image-tool.png"), fullPage: true });
  await opened.getByRole("button", { name: "Share" }).click();
  const link = await opened.getByLabel("Share link").inputValue();
  assert.deepEqual(problems, []);

  // Another member: the picture itself is not theirs; the snapshot shows it to them.
  const other = await page("other", { bypassCSP: true });
  const direct = await other.page.request.get(`${base}${address}`);
  assert.equal(direct.status(), 404);
  assert.equal((await (await context.request.get(`${base}${address}`)).body()).subarray(1, 4).toString(), "PNG");
  await other.page.goto(link);
  await other.page.waitForFunction(() => document.querySelector(".thread .pictures img")?.naturalWidth === 1024);
  assert.notEqual(await other.page.locator(".thread .pictures img").getAttribute("src"), address);
  assert.deepEqual(await violations(other.page, ".thread .pictures img"), []);
  assert.deepEqual(other.problems, []);
  await other.context.close();
  await context.close();
});
