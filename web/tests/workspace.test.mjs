// The workspace in Chromium against a real `llmtool serve` on the scripted mock provider: a
// member runs a tool, reloads, finds the conversation in the sidebar and goes on with it on
// its own page (`/c/ID`); renames, searches, archives and deletes it from the sidebar; a
// stranger's address for it is a 404 page that says nothing of it; a collaborator joins by its
// link; and a public snapshot opens signed out, until it is revoked.
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
const work = mkdtempSync(join(tmpdir(), "llmtool-workspace-test-"));
const data = join(work, "data");
const children = [];
const tokens = {};
let base;
let browser;

const start = (...args) => startProgram(children, ...args);
const cli = (...args) => runCli(llmtool, data, ...args);

before(async () => {
  const [mockUrl] = await start(mockLlm, ["127.0.0.1:0"], { MOCK_LLM_ANSWER: "The **Moon** pulls the sea." }, /http:\/\/127\.0\.0\.1:\d+/);
  // A provider that holds each answer back four seconds: time to stop one.
  const [slowUrl] = await start(mockLlm, ["127.0.0.1:0", "20", "4000"], { MOCK_LLM_ANSWER: "Slowly, slowly." }, /http:\/\/127\.0\.0\.1:\d+/);
  const config = join(work, "config.toml");
  writeFileSync(
    config,
    `[providers.mock]\napi = "openai"\nbase_url = "${mockUrl}/v1"\napi_key_env = "MOCK_KEY"\n\n[prices."mock/m"]\ninput = 1.0\noutput = 2.0\n\n` +
      `[providers.slow]\napi = "openai"\nbase_url = "${slowUrl}/v1"\napi_key_env = "MOCK_KEY"\n\n[prices."slow/m"]\ninput = 1.0\noutput = 2.0\n`,
  );
  tokens.owner = cli("token", "create", "vic", "--role", "viewer");
  tokens.other = cli("token", "create", "wes", "--role", "viewer");
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

function page(signedInAs, options) {
  return openPage(browser, base, signedInAs && tokens[signedInAs], options);
}

test("a member runs a tool, reloads, finds the conversation in the sidebar and continues it", async () => {
  const { page: opened, problems } = await page("owner", { bypassCSP: true });
  await opened.goto(`${base}/t/teach-me-anything`);
  const sidebar = opened.getByRole("complementary", { name: "Conversations" });
  await sidebar.getByText("No conversations yet: run a tool to start one.").waitFor();
  await opened.getByLabel(/^topic/).fill("tides");
  await opened.getByLabel("Model", { exact: true }).selectOption("mock/m");
  await opened.getByRole("button", { name: "Run" }).click();
  await opened.locator("#output .outcome.ok").waitFor({ timeout: 30_000 });
  // The page is now the conversation's own address, and the sidebar lists it.
  await opened.waitForURL(/\/c\/[0-9A-Za-z]+$/);
  const address = opened.url();
  const listed = sidebar.getByRole("link", { name: /tides/ });
  await listed.waitFor();

  await opened.reload();
  await opened.locator(".thread .turn .outcome.ok").first().waitFor();
  assert.equal(await opened.locator("h1").textContent(), await listed.textContent());
  assert.match(await opened.locator(".thread .answer strong").first().textContent(), /Moon/);
  // Found again from another page, and continued where it stopped.
  await opened.goto(`${base}/`);
  await sidebar.getByRole("link", { name: /tides/ }).click();
  await opened.waitForURL(address);
  await opened.getByLabel("Ask a follow-up").fill("Why the Moon?");
  await opened.getByRole("button", { name: "Ask" }).click();
  await opened.locator(".thread .turns .turn .outcome.ok").waitFor({ timeout: 30_000 });
  await opened.reload();
  await opened.locator(".thread .turn").nth(1).waitFor();
  assert.equal(await opened.locator(".thread .turn").count(), 2, "both turns are kept");
  assert.equal(await opened.locator(".asked-text").textContent(), "Why the Moon?");
  assert.deepEqual(await violations(opened, ".thread .turn"), []);
  await opened.screenshot({ path: join(screenshots, "workspace.png"), fullPage: true });

  // Renamed in the sidebar, found by it and by what its turns say, archived, deleted.
  const row = sidebar.locator("li").filter({ has: opened.getByRole("link", { name: /tides/ }) });
  await row.locator("summary").click();
  await row.getByRole("button", { name: "Rename" }).click();
  await sidebar.getByLabel("Title").fill("Moon notes");
  await sidebar.getByRole("button", { name: "Save" }).click();
  await sidebar.getByRole("link", { name: "Moon notes" }).waitFor();
  await opened.locator("h1", { hasText: "Moon notes" }).waitFor();
  await sidebar.getByLabel("Search conversations").fill("pulls");
  await sidebar.getByRole("link", { name: "Moon notes" }).waitFor();
  await sidebar.getByLabel("Search conversations").fill("nothing-like-it");
  await sidebar.getByText("No conversation matches.").waitFor();
  await sidebar.getByLabel("Search conversations").fill("");
  const renamed = sidebar.locator("li").filter({ has: opened.getByRole("link", { name: "Moon notes" }) });
  await renamed.locator("summary").click();
  await renamed.getByRole("button", { name: "Archive" }).click();
  await sidebar.getByText("No conversations yet: run a tool to start one.").waitFor();
  await sidebar.getByLabel("Archived").check();
  const archived = sidebar.locator("li").filter({ has: opened.getByRole("link", { name: "Moon notes" }) });
  await archived.locator("summary").click();
  opened.once("dialog", (dialog) => dialog.accept());
  await archived.getByRole("button", { name: "Delete" }).click();
  await opened.waitForURL(`${base}/`);
  const gone = await opened.goto(address);
  assert.equal(gone.status(), 404, "a deleted conversation's address is missing");
  await opened.locator("h1", { hasText: "No such conversation" }).waitFor();
  assert.deepEqual(problems, []);
});

test("another member's conversation is a 404 page, the same as one that never was", async () => {
  const owner = await page("owner");
  await owner.page.goto(`${base}/t/teach-me-anything`);
  await owner.page.getByLabel(/^topic/).fill("waves");
  await owner.page.getByLabel("Model", { exact: true }).selectOption("mock/m");
  await owner.page.getByRole("button", { name: "Run" }).click();
  await owner.page.waitForURL(/\/c\/[0-9A-Za-z]+$/);
  const address = owner.page.url();

  const other = await page("other");
  const foreign = await other.page.goto(address);
  assert.equal(foreign.status(), 404);
  await other.page.locator("h1", { hasText: "No such conversation" }).waitFor();
  const foreignText = (await other.page.locator("main").textContent()).replace(address.split("/").pop(), "ID");
  const missing = await other.page.goto(`${base}/c/01jqnosuchconversation0000`);
  assert.equal(missing.status(), 404);
  await other.page.locator("h1", { hasText: "No such conversation" }).waitFor();
  const missingText = (await other.page.locator("main").textContent()).replace("01jqnosuchconversation0000", "ID");
  assert.equal(foreignText, missingText);
  assert.equal(await other.page.getByRole("link", { name: /waves/ }).count(), 0, "not in their sidebar");
});

test("a collaborator joins by the link, adds a turn the owner sees, and loses it when collaboration is turned off", async () => {
  const owner = await page("owner", { bypassCSP: true });
  await owner.page.goto(`${base}/t/teach-me-anything`);
  await owner.page.getByLabel(/^topic/).fill("reefs");
  await owner.page.getByLabel("Model", { exact: true }).selectOption("mock/m");
  await owner.page.getByRole("button", { name: "Run" }).click();
  await owner.page.waitForURL(/\/c\/[0-9A-Za-z]+$/);
  const address = owner.page.url();
  await owner.page.reload();
  await owner.page.getByRole("button", { name: "Turn collaboration on" }).click();
  const link = await owner.page.getByLabel("Collaboration link").inputValue();
  assert.match(link, /\/c\/join#[0-9a-f]{64}$/);

  const other = await page("other");
  await other.page.goto(link);
  await other.page.getByRole("button", { name: "Join this conversation" }).click();
  await other.page.waitForURL(address);
  await other.page.getByLabel("Ask a follow-up").fill("What lives there?");
  await other.page.getByRole("button", { name: "Ask" }).click();
  await other.page.locator(".thread .turns .turn .outcome.ok").waitFor({ timeout: 30_000 });
  await other.page.getByRole("complementary", { name: "Conversations" }).getByRole("link", { name: /reefs · joined/ }).waitFor();

  await owner.page.reload();
  await owner.page.locator(".who-asked", { hasText: "wes asked" }).waitFor();
  assert.equal(await owner.page.locator(".asked-text").last().textContent(), "What lives there?");
  await owner.page.getByRole("list").filter({ hasText: "wes" }).waitFor();
  // Blank the link before the picture: a screenshot must not show a real token.
  await owner.page.getByRole("button", { name: "Turn collaboration off" }).click();
  await owner.page.getByRole("button", { name: "Turn collaboration on" }).waitFor();
  assert.deepEqual(await violations(owner.page, ".collaboration"), []);
  await owner.page.screenshot({ path: join(screenshots, "collaboration.png"), fullPage: true });

  const gone = await other.page.goto(address);
  assert.equal(gone.status(), 404, "off: the collaborator lost it");
  await other.page.goto(link);
  await other.page.getByRole("button", { name: "Join this conversation" }).click();
  await other.page.locator("p", { hasText: "This link joins nothing" }).waitFor();
  assert.deepEqual(owner.problems, []);
  assert.deepEqual(other.problems, []);
});

test("a public snapshot opens signed out, and is a 404 page once revoked", async () => {
  // Off until an admin switches them on, in Teams.
  const admin = await page("admin");
  await admin.page.goto(`${base}/teams`);
  const snapshots = admin.page.getByLabel("Members may publish public snapshots");
  await admin.page.getByLabel("Members see the built-in tools").waitFor();
  assert.equal(await snapshots.isChecked(), false, "off by default");
  await snapshots.check();
  await admin.page.getByText("Members may publish public snapshots.").first().waitFor();

  const owner = await page("owner", { bypassCSP: true });
  await owner.page.goto(`${base}/t/teach-me-anything`);
  await owner.page.getByLabel(/^topic/).fill("comets");
  await owner.page.getByLabel("Model", { exact: true }).selectOption("mock/m");
  await owner.page.getByRole("button", { name: "Run" }).click();
  await owner.page.waitForURL(/\/c\/[0-9A-Za-z]+$/);
  await owner.page.reload();
  await owner.page.getByRole("button", { name: "Publish a snapshot" }).click();
  const address = await owner.page.getByLabel("Snapshot address").inputValue();
  assert.match(address, /\/s\/[0-9a-f]{64}$/);

  const visitor = await page(undefined, { bypassCSP: true });
  const opened = await visitor.page.goto(address);
  assert.equal(opened.status(), 200);
  assert.equal(opened.headers()["x-robots-tag"], "noindex, nofollow");
  assert.equal(opened.headers()["referrer-policy"], "no-referrer");
  await visitor.page.locator(".thread .turn .answer strong", { hasText: "Moon" }).waitFor();
  assert.equal(await visitor.page.locator('meta[name="robots"]').getAttribute("content"), "noindex");
  assert.match(await visitor.page.locator("main > .facts").textContent(), /shared publicly on/);
  assert.equal(await visitor.page.getByRole("link", { name: "Sign out" }).count(), 0);
  assert.deepEqual(await violations(visitor.page, ".thread .turn"), []);
  await visitor.page.screenshot({ path: join(screenshots, "snapshot.png"), fullPage: true });

  // Revoked by its owner: the address is a 404 page.
  await owner.page.getByRole("button", { name: "Revoke" }).click();
  await owner.page.getByText("None yet.", { exact: false }).waitFor();
  const revoked = await visitor.page.reload();
  assert.equal(revoked.status(), 404);
  await visitor.page.locator("h1", { hasText: "No such snapshot" }).waitFor();
  assert.deepEqual(owner.problems, []);
  assert.deepEqual(visitor.problems, []);
  assert.deepEqual(admin.problems, []);
});

test("the thread: a budget warning, a switch of model, Stop, and Retry", async () => {
  // A budget that warns from the first cent: the run's start event carries the warning.
  const budget = await fetch(`${base}/api/v1/budgets/member/vic@tokens.invalid`, {
    method: "PUT",
    headers: { authorization: `Bearer ${tokens.admin}`, "content-type": "application/json" },
    body: JSON.stringify({ limit_usd: 1000, warn_at: 0.000001, hard: false }),
  });
  assert.equal(budget.status, 204, await budget.text());

  const { page: opened, problems } = await page("owner", { bypassCSP: true });
  await opened.goto(`${base}/t/teach-me-anything`);
  await opened.getByLabel(/^topic/).fill("orbits");
  await opened.getByLabel("Model", { exact: true }).selectOption("mock/m");
  await opened.getByRole("button", { name: "Run" }).click();
  await opened.locator("#output .outcome.ok").waitFor({ timeout: 30_000 });
  const banner = opened.locator("#output .banner.warning");
  assert.match(await banner.textContent(), /Budget warning: the member budget of vic@tokens\.invalid is at \d+% of its \$1000\.00 a month/);
  assert.doesNotMatch(await banner.textContent(), /`/, "no literal backticks");

  // The next turn on another model, stopped while it waits: kept as cancelled.
  const composer = opened.getByLabel("Model for the next turn");
  await composer.locator("option", { hasText: "slow/m" }).waitFor({ state: "attached" });
  assert.equal(await composer.inputValue(), "mock/m", "the turn before's model is picked");
  await composer.selectOption("slow/m");
  await opened.getByLabel("Ask a follow-up").fill("Take your time");
  await opened.getByLabel("Ask a follow-up").press("Enter");
  await opened.locator(".turns .facts", { hasText: "Running on slow/m" }).waitFor();
  await opened.getByRole("button", { name: "Stop" }).click();
  await opened.locator(".turns .facts", { hasText: "Stopped" }).waitFor();
  assert.equal(await opened.getByRole("button", { name: "Stop" }).isHidden(), true);

  // Retry asks it again, as a new turn, on the model picked now.
  await composer.selectOption("mock/m");
  await opened.locator(".turns .turn").first().getByRole("button", { name: "Retry" }).click();
  await opened.locator(".turns .turn").nth(1).locator(".outcome.ok").waitFor({ timeout: 30_000 });
  assert.equal(await opened.locator(".turns .asked-text").nth(1).textContent(), "Take your time");
  assert.match(await opened.locator(".turns .turn").nth(1).locator(".facts").textContent(), /mock\/m/);

  // Kept: the stopped turn on slow/m as cancelled, the retry on mock/m.
  await opened.reload();
  await opened.locator(".thread .turn").nth(2).waitFor();
  const facts = await opened.locator(".thread > .turn .facts").allTextContents();
  assert.match(facts[1], /^cancelled · slow\/m/);
  assert.match(facts[2], /^ok · mock\/m/);
  assert.equal(await opened.locator(".thread > .turn").nth(1).getByRole("button", { name: "Retry" }).count(), 1);
  assert.deepEqual(await violations(opened, ".follow-up"), []);
  assert.deepEqual(problems, []);
});
