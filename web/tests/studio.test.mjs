// The studio in a real browser: Debian's Chromium driven by Playwright (playwright-core, no
// browser download) against a real `llmtool serve`, whose tools run on the scripted mock
// provider (llmtool-testkit's mock-llm) and on the embedded local model.
//
// Run by the test command after `cargo build`: node --test web/tests/
// LLMTOOL_BLESS=1 writes the screenshots into docs/studio/ (else into target/studio/).

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
const work = mkdtempSync(join(tmpdir(), "llmtool-studio-test-"));
const data = join(work, "data");
const children = [];
let base;
let browser;
const tokens = {};

const start = (...args) => startProgram(children, ...args);
const cli = (...args) => runCli(llmtool, data, ...args);

before(async () => {
  const [mockUrl] = await start(mockLlm, ["127.0.0.1:0", "6"], {}, /http:\/\/127\.0\.0\.1:\d+/);
  const config = join(work, "config.toml");
  writeFileSync(
    config,
    `[providers.mock]\napi = "openai"\nbase_url = "${mockUrl}/v1"\napi_key_env = "MOCK_KEY"\n\n[prices."mock/m"]\ninput = 1.0\noutput = 2.0\n`,
  );
  tokens.editor = cli("token", "create", "ana", "--role", "editor");
  tokens.viewer = cli("token", "create", "vic", "--role", "viewer");
  const env = { LLMTOOL_DATA_DIR: data, LLMTOOL_NO_LOG: "1", MOCK_KEY: "mock-secret-key-5150" };
  const [, address] = await start(llmtool, ["serve", "--listen", "127.0.0.1:0", "--public-read", "--config", config], env, /llmtool serve: http:\/\/([\d.:]+)\/api\/v1/);
  base = `http://${address}`;
  browser = await launchChromium();
  mkdirSync(screenshots, { recursive: true });
});

after(async () => {
  await browser?.close();
  for (const child of children) child.kill("SIGKILL");
});

function page({ signedInAs, bypassCSP = false } = {}) {
  return openPage(browser, base, signedInAs && tokens[signedInAs], { bypassCSP });
}

/**
 * axe-core's serious and critical violations on `path`, loaded (as `signedInAs`) in a context
 * of its own that lets the audit script in past the page's Content Security Policy; the
 * pages under test keep theirs. `ready` waits for what must be on the page first.
 */
async function accessibilityProblems(path, { signedInAs, ready } = {}) {
  const { page: opened, context } = await page({ signedInAs, bypassCSP: true });
  await opened.goto(`${base}${path}`);
  const found = await violations(opened, ready);
  await context.close();
  return found;
}

test("the gallery lists the built-in tools, searches as you type and filters by tag, in under 100 KB of script", async () => {
  const { page: opened, context, problems } = await page();
  let script = 0;
  opened.on("response", async (response) => {
    if (response.url().endsWith(".js")) script += (await response.body()).length;
  });
  await opened.goto(base);
  await opened.getByRole("link", { name: "Teach Me Anything" }).waitFor();
  const cards = await opened.locator(".card").count();
  assert.ok(cards >= 8, `${cards} cards`);
  await opened.getByLabel("Search the library").fill("teach");
  await opened.waitForFunction(() => document.querySelectorAll(".card").length === 1);
  await opened.getByLabel("Search the library").fill("");
  await opened.getByRole("button", { name: /^built-in/ }).click();
  await opened.waitForFunction(() => document.querySelectorAll(".card").length >= 8);
  await opened.screenshot({ path: join(screenshots, "gallery.png") });
  assert.ok(script < 100_000, `the gallery loads ${script} bytes of script`);
  assert.deepEqual(await accessibilityProblems("/", { ready: ".card" }), []);
  assert.deepEqual(await accessibilityProblems("/signin", { ready: "#token" }), []);
  assert.deepEqual(problems, []);
  await context.close();
});

test("the gallery and a tool's page work from the keyboard alone", async () => {
  const { page: opened, context } = await page();
  await opened.goto(base);
  await opened.locator(".card").first().waitFor();
  /** Presses Tab until `check` holds for the focused element (at most 40 times). */
  const tabTo = async (check) => {
    for (let i = 0; i < 40; i++) {
      await opened.keyboard.press("Tab");
      if (await opened.evaluate(check)) return;
    }
    assert.fail(`Tab never reached ${check}`);
  };
  await tabTo(() => document.activeElement?.id === "search");
  await opened.keyboard.type("strategy");
  await opened.waitForFunction(() => document.querySelectorAll(".card").length === 1);
  await tabTo(() => document.activeElement?.textContent === "Strategy Consultant");
  await opened.keyboard.press("Enter");
  await opened.waitForURL(`${base}/t/strategy-consultant`);
  // The form is drawn once the tool has loaded: a person waits for it, and so does the test
  // (on a busy machine forty Tabs can pass before it is there).
  await opened.locator("#var-situation").waitFor();
  await tabTo(() => document.activeElement?.id === "var-situation");
  await opened.keyboard.type("A bakery wants a second shop.");
  // The checkboxes of a multi-select: Tab reaches them, Space ticks.
  await tabTo(() => document.activeElement?.value === "PESTLE");
  await opened.keyboard.press("Space");
  await opened.locator("#rendered").filter({ hasText: "PESTLE" }).waitFor();
  await context.close();
});

test("a viewer fills a tool's form, sees the prompt, runs it on the mock and on the local model, and cannot publish", async () => {
  const { page: opened, context, problems } = await page({ signedInAs: "viewer" });
  await opened.goto(`${base}/t/teach-me-anything`);
  await opened.getByLabel(/^topic/).fill("tides");
  await opened.locator("#rendered").filter({ hasText: "Teach me about tides" }).waitFor();
  assert.equal(await opened.getByLabel(/^level/).inputValue(), "curious beginner", "the default is filled");
  const mockOption = opened.getByLabel("Model", { exact: true }).locator('option[value="mock/m"]');
  assert.match(await mockOption.textContent(), /\$1\/M in, \$2\/M out/, "the configured price is shown");
  await opened.getByLabel("Model", { exact: true }).selectOption("mock/m");
  await opened.getByRole("button", { name: "Run" }).click();
  await opened.locator("#output .outcome.ok").waitFor({ timeout: 30_000 });
  const facts = await opened.locator("#output .facts").textContent();
  assert.match(facts, /mock\/m/);
  assert.match(facts, /\$0\.0000/);
  assert.ok((await opened.locator("#output .answer").textContent()).length > 0);
  await opened.screenshot({ path: join(screenshots, "tool-page.png"), fullPage: true });

  await opened.getByLabel("Model", { exact: true }).selectOption("local/smollm2");
  await opened.getByRole("button", { name: "Run" }).click();
  await opened.locator("#output .facts").filter({ hasText: "local/smollm2" }).locator(".outcome").waitFor({ timeout: 120_000 });
  await opened.locator("#runs tbody tr").nth(1).waitFor();
  assert.deepEqual(await accessibilityProblems("/t/teach-me-anything", { signedInAs: "viewer", ready: "#runs tbody tr" }), []);

  // Two models side by side, each with its own outcome, cost and latency.
  await opened.getByLabel("Model 1").selectOption("mock/m");
  await opened.getByLabel("Model 2").selectOption("local/smollm2");
  await opened.getByRole("button", { name: "Compare" }).click();
  const columns = opened.locator(".compare-column");
  await columns.nth(0).locator(".outcome").waitFor({ timeout: 30_000 });
  await columns.nth(1).locator(".outcome").waitFor({ timeout: 120_000 });
  assert.match(await columns.nth(0).locator(".facts").textContent(), /mock\/m .* ms/);
  assert.match(await columns.nth(1).locator(".facts").textContent(), /local\/smollm2 .* ms/);

  // A multi-select with allowed values is a set of checkboxes, its defaults ticked; the
  // prompt follows the ticks.
  await opened.goto(`${base}/t/strategy-consultant`);
  const frameworks = opened.getByRole("group", { name: "frameworks" });
  await frameworks.getByRole("checkbox", { name: "PESTLE" }).waitFor();
  assert.equal(await frameworks.getByRole("checkbox", { name: "SWOT" }).isChecked(), true);
  assert.equal(await frameworks.getByRole("checkbox", { name: "PESTLE" }).isChecked(), false);
  // With a required value missing, the prompt area says which (as a value to give, not an error).
  await opened.locator("#rendered.pending").filter({ hasText: "situation" }).waitFor();
  await opened.getByLabel(/^situation/).fill("A bakery wants a second shop.");
  await frameworks.getByRole("checkbox", { name: "PESTLE" }).check();
  await opened.locator("#rendered").filter({ hasText: "PESTLE" }).waitFor();

  await opened.goto(`${base}/t/teach-me-anything/edit`);
  await opened.getByText("Read-only: publishing needs the editor role.").waitFor();
  assert.equal(await opened.getByRole("button", { name: "Publish a new version" }).count(), 0);
  // The server refuses too, whatever the page shows.
  const refused = await opened.evaluate(async () => {
    const session = await (await fetch("/api/v1/session")).json();
    const answer = await fetch("/api/v1/tools?slug=teach-me-anything", { method: "POST", headers: { "x-csrf-token": session.csrf }, body: "{}" });
    return answer.status;
  });
  assert.equal(refused, 403);
  assert.deepEqual(problems, []);
  await context.close();
});

test("a document picked for a text variable fills it with its text, and a scanned one says why", async () => {
  const documents = join(root, "crates", "llmtool-documents", "tests", "fixtures", "real-world");
  const { page: opened, context, problems } = await page({ signedInAs: "viewer" });
  await opened.goto(`${base}/t/teach-me-anything`);
  const picker = opened.getByLabel("Fill topic from a document");
  await picker.setInputFiles(join(documents, "docx", "tables.docx"));
  await opened.getByRole("status").filter({ hasText: /tables\.docx: DOCX document, \d+ characters/ }).waitFor();
  assert.match(await opened.getByLabel(/^topic/).inputValue(), /^Above\n\nTop left/);
  await opened.locator("#rendered").filter({ hasText: "Teach me about Above" }).waitFor();

  await picker.setInputFiles(join(documents, "pdf", "scotus-transcript-p1.pdf"));
  await opened.getByRole("status").filter({ hasText: /scotus-transcript-p1\.pdf: PDF, 1 page, / }).waitFor();
  assert.match(await opened.getByLabel(/^topic/).inputValue(), /SUPREME COURT/i);

  // No text layer: the field keeps its value, and the status says what to do.
  const before = await opened.getByLabel(/^topic/).inputValue();
  await picker.setInputFiles(join(documents, "pdf", "c02-22-scanned.pdf"));
  await opened.getByRole("status").filter({ hasText: /no text layer/ }).waitFor();
  assert.equal(await opened.getByLabel(/^topic/).inputValue(), before);
  assert.deepEqual(await accessibilityProblems("/t/teach-me-anything", { signedInAs: "viewer", ready: "#document-topic" }), []);
  assert.deepEqual(problems, []);
  await context.close();
});

test("an editor sees a diagnostic while typing, applies its fix, publishes, and sees the new version and the diff", async () => {
  const { page: opened, context, problems } = await page({ signedInAs: "editor" });
  await opened.goto(`${base}/t/teach-me-anything/edit`);
  await opened.locator(".cm-content").waitFor();
  // Misspell a placeholder by typing: put the caret after `{{top` and press Backspace.
  await opened.evaluate(() => {
    const view = window.studioEditor;
    const at = view.state.doc.toString().indexOf("{{topic}}");
    view.dispatch({ selection: { anchor: at + 5 } });
    view.focus();
  });
  await opened.keyboard.press("Backspace");
  await opened.locator(".cm-lint-marker-warning, .cm-lint-marker-error").first().waitFor({ timeout: 15_000 });
  await opened.locator("#check-summary").filter({ hasText: "warning" }).waitFor();
  await opened.screenshot({ path: join(screenshots, "editor.png"), fullPage: true });
  // Apply the fix the diagnostic offers, from the list under the editor.
  await opened.locator("#problems li").filter({ hasText: "{{toic}}" }).getByRole("button", { name: /Fix: write `\{\{topic\}\}`/ }).click();
  await opened.waitForFunction(() => window.studioEditor.state.doc.toString().includes("{{topic}}"));
  await opened.locator("#check-summary").filter({ hasText: "No problems found." }).waitFor({ timeout: 15_000 });
  // The metadata form writes to the file.
  await opened.getByLabel("Temperature").fill("0.3");
  await opened.getByLabel("Temperature").press("Tab");
  await opened.waitForFunction(() => window.studioEditor.state.doc.toString().includes('"temperature": 0.3'));
  // A real change, typed over a selection, then published with a note.
  await opened.evaluate(() => {
    const view = window.studioEditor;
    const at = view.state.doc.toString().indexOf("Teach me about");
    view.dispatch({ selection: { anchor: at, head: at + "Teach me about".length } });
    view.focus();
  });
  await opened.keyboard.type("Explain");
  await opened.getByLabel("Change note").fill("shorter opening");
  await opened.getByRole("button", { name: "Publish a new version" }).click();
  await opened.locator("#status").filter({ hasText: "Published teach-me-anything v2" }).waitFor();
  await opened.getByRole("button", { name: "Diff with v1" }).click();
  await opened.locator(".diff .removed").filter({ hasText: "Teach me about" }).waitFor();
  await opened.locator(".diff .added").filter({ hasText: "Explain" }).waitFor();
  // Move the production label to the new version.
  await opened.getByLabel("Label").fill("production");
  await opened.getByLabel("points at").selectOption("2");
  await opened.getByRole("button", { name: "Set label" }).click();
  await opened.locator("#versions li").filter({ hasText: "v2" }).filter({ hasText: "labels: production" }).waitFor();
  assert.deepEqual(await accessibilityProblems("/t/teach-me-anything/edit", { signedInAs: "editor", ready: ".cm-content" }), []);
  assert.deepEqual(problems, []);
  await context.close();
});

test("signing in never leaves the site, whatever `next` says", async () => {
  const { page: opened, context, problems } = await page();
  // Any page of another origin is answered here, so that a wrong redirect shows as its URL.
  const elsewhere = [];
  await context.route((url) => url.origin !== base, (route) => {
    elsewhere.push(route.request().url());
    return route.fulfill({ status: 200, contentType: "text/html", body: "elsewhere" });
  });
  const outward = ["/.//evil.example", "/..//x", "/./\\x", "/%2e%2e//x", "/.%2e//x", "\t/./\\/evil.example", "//evil.example", "/\\evil.example", "https://evil.example/", "javascript:alert(1)"];
  for (const next of outward) {
    await opened.goto(`${base}/signin?next=${encodeURIComponent(next)}`);
    await opened.getByLabel("Your library token").fill(tokens.viewer);
    await opened.getByRole("button", { name: "Sign in" }).click();
    await opened.waitForURL((url) => !url.pathname.startsWith("/signin"));
    assert.equal(opened.url(), `${base}/`, `next=${JSON.stringify(next)}`);
  }
  assert.deepEqual(elsewhere, []);
  // A page of this site is where signing in leads.
  await opened.goto(`${base}/signin?next=${encodeURIComponent("/t/teach-me-anything?label=x#runs")}`);
  await opened.getByLabel("Your library token").fill(tokens.viewer);
  await opened.getByRole("button", { name: "Sign in" }).click();
  await opened.waitForURL(`${base}/t/teach-me-anything?label=x#runs`);
  assert.deepEqual(problems, []);
  await context.close();
});

test("a tool's page asks only for its own addresses: a version that is not a number is refused", async () => {
  const { page: opened, context, problems } = await page();
  const asked = [];
  opened.on("request", (request) => asked.push(new URL(request.url()).pathname));
  for (const version of ["../../pair-programmer", "..", "1/../../../pair-programmer", "0", "1e3"]) {
    asked.length = 0;
    await opened.goto(`${base}/t/teach-me-anything?version=${encodeURIComponent(version)}`);
    await opened.locator("main .problem").waitFor();
    assert.equal(await opened.locator("main h1").textContent(), "teach-me-anything", version);
    assert.match(await opened.locator("main .problem").textContent(), /is not a version number/, version);
    assert.ok(!asked.some((p) => p.startsWith("/api/v1/tools/") && !p.startsWith("/api/v1/tools/teach-me-anything")), `${version}: ${asked.join(" ")}`);
  }
  // A real version still shows.
  await opened.goto(`${base}/t/teach-me-anything?version=1`);
  await opened.locator("main .facts").first().waitFor();
  assert.match(await opened.locator("main .facts").first().textContent(), /teach-me-anything v1/);
  assert.deepEqual(problems, []);
  await context.close();
});

test("signed out, a public library's pages stay in their layout: nothing to run, no raw errors, 404s for what is not there", async () => {
  const { page: opened, context, problems } = await page();
  const response = await opened.goto(`${base}/t/teach-me-anything`);
  assert.equal(response.status(), 200);
  await opened.getByRole("heading", { name: "Teach Me Anything" }).waitFor();
  // Running needs a session: both buttons off, and a way to sign in beside each.
  assert.equal(await opened.getByRole("button", { name: "Run" }).isDisabled(), true);
  assert.equal(await opened.getByRole("button", { name: "Compare" }).isDisabled(), true);
  assert.equal(await opened.getByRole("link", { name: "Sign in" }).count() >= 3, true);
  // No raw API error, and nothing said outside the page.
  assert.equal(await opened.locator("footer").innerText(), "");
  // The preview is filled in once the page has asked the server for it.
  await opened.locator("#rendered", { hasText: /once the form is filled in/ }).waitFor();
  assert.equal(await opened.locator("#rendered.problem").count(), 0);
  // A name the server quotes shows as code, not between backticks.
  assert.equal(await opened.locator("#rendered code").first().innerText(), "topic");
  assert.match(await opened.locator("#runs caption").innerText(), /Sign in to see the runs/);

  const missing = await opened.goto(`${base}/t/no-such-tool`);
  assert.equal(missing.status(), 404);
  await opened.getByRole("heading", { name: "No such tool" }).waitFor();
  assert.equal(await opened.locator("main code").first().innerText(), "no-such-tool");
  const nowhere = await opened.goto(`${base}/no/such/page`);
  assert.equal(nowhere.status(), 404);
  await opened.getByRole("heading", { name: "No such page" }).waitFor();
  assert.deepEqual(await accessibilityProblems("/no/such/page", { ready: "h1" }), []);
  assert.deepEqual(problems, []);
  await context.close();
});

test("signed out, a library open to members only says so once, in the page, and offers no search", async () => {
  const closed = join(work, "closed");
  const env = { LLMTOOL_DATA_DIR: closed, LLMTOOL_NO_LOG: "1" };
  const [, address] = await start(llmtool, ["serve", "--listen", "127.0.0.1:0"], env, /llmtool serve: http:\/\/([\d.:]+)\/api\/v1/);
  const { page: opened, context, problems } = await page();
  await opened.goto(`http://${address}/`);
  await opened.getByText("This library is open to its members only").waitFor();
  assert.equal(await opened.getByLabel("Search the library").isDisabled(), true);
  assert.equal(await opened.locator(".card").count(), 0);
  await opened.goto(`http://${address}/t/teach-me-anything`);
  await opened.getByText("to see this tool").waitFor();
  assert.equal(await opened.locator("footer").innerText(), "", "no 'not signed in any more' line");
  assert.deepEqual(problems, []);
  await context.close();
});
