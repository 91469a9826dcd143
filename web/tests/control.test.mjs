// The Control Center in a real browser: Debian's Chromium (Playwright) against a real
// `llmtool serve` and a mock OpenAI-compatible provider (below, on loopback). An admin adds an
// integration pointing at the mock, tests it, prices its model; a viewer's run uses it and its
// cost shows under their team on the spend page and in its CSV; a hard budget then refuses the
// next run before it reaches the provider; each change is in the audit log; the key is in no
// page, answer or log line. Every page passes axe-core and is used from the keyboard.
//
// Run by the test command after `cargo build`: node --test web/tests/
// LLMTOOL_BLESS=1 writes the screenshots into docs/control-center/ (else target/control-center/).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { violations } from "./axe.mjs";
import { launchChromium } from "./browser.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
// The binaries the test command built (LLMTOOL_BUILD_DIR), else the dev build.
const buildDir = process.env.LLMTOOL_BUILD_DIR ?? join(root, "target", "debug");
const llmtool = join(buildDir, "llmtool");
const screenshots = process.env.LLMTOOL_BLESS ? join(root, "docs", "control-center") : join(root, "target", "control-center");
const work = mkdtempSync(join(tmpdir(), "llmtool-control-test-"));
const data = join(work, "data");
const KEY = "sk-mock-browser-test-5550123-wxyz";
const children = [];
let serverLog = "";
let base;
let browser;
let mock;
let asked = 0;
let admin;
let sam;
let poet;

function cli(...args) {
  const result = spawnSync(llmtool, args, { env: { ...process.env, LLMTOOL_DATA_DIR: data }, encoding: "utf8" });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.trim();
}

/** An OpenAI-compatible provider: "pong" and a long tail whole, or a streamed answer of 1,000 + 500 tokens. */
function startMock() {
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      asked += 1;
      const asks = JSON.parse(body || "{}");
      if (request.headers.authorization !== `Bearer ${KEY}`) {
        response.writeHead(401, { "content-type": "application/json" }).end('{"error":{"message":"bad key"}}');
      } else if (asks.stream) {
        response.writeHead(200, { "content-type": "text/event-stream" });
        const chunk = (data) => response.write(`data: ${JSON.stringify(data)}\n\n`);
        chunk({ choices: [{ index: 0, delta: { content: "Tides turn slowly." } }] });
        chunk({ choices: [], usage: { prompt_tokens: 1000, completion_tokens: 500 } });
        response.end("data: [DONE]\n\n");
      } else {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ choices: [{ message: { role: "assistant", content: `pong${" and on".repeat(300)}` }, finish_reason: "stop" }], usage: { prompt_tokens: 10, completion_tokens: 1 } }));
      }
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

before(async () => {
  mock = await startMock();
  admin = cli("token", "create", "ops", "--role", "admin");
  cli("team", "create", "sales");
  cli("member", "add", "sam@example.test", "--name", "Sam Seller", "--team", "sales");
  sam = cli("token", "create", "sam-laptop", "--member", "sam@example.test");
  const env = { ...process.env, LLMTOOL_DATA_DIR: data, LLMTOOL_NO_LOG: "1", RUST_LOG: "debug" };
  const server = spawn(llmtool, ["serve", "--listen", "127.0.0.1:0"], { env, stdio: ["ignore", "ignore", "pipe"] });
  children.push(server);
  base = await new Promise((resolve, reject) => {
    server.stderr.on("data", (chunk) => {
      serverLog += chunk;
      const found = serverLog.match(/llmtool serve: (http:\/\/[^/\s]+)\/api\/v1/);
      if (found) resolve(found[1]);
    });
    server.on("exit", (code) => reject(new Error(`llmtool serve exited (${code}): ${serverLog}`)));
  });
  poet = JSON.parse(readFileSync(join(root, "examples", "teach-me-anything.json"), "utf8"));
  poet.metadata.prompt_name = "Tide Poet";
  poet.metadata.model_version = ["mock/m"];
  poet.metadata.parameters = { ...poet.metadata.parameters, max_tokens: 100 };
  await call(admin, "/tools?slug=tide-poet", { method: "POST", body: JSON.stringify(poet) });
  await call(admin, "/tools/tide-poet/tags/sales", { method: "PUT" });
  browser = await launchChromium();
  mkdirSync(screenshots, { recursive: true });
});

after(async () => {
  await browser?.close();
  mock?.close();
  for (const child of children) child.kill("SIGKILL");
});

async function call(token, path, init = {}) {
  return fetch(`${base}/api/v1${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...init.headers },
  });
}

/** A run of the tide poet by Sam, through the API: its status and body. */
async function samRuns() {
  const values = {};
  for (const variable of poet.metadata.variables ?? []) {
    values[variable.name] = variable.allowed_values?.[0] ?? "tides";
  }
  const response = await call(sam, "/tools/tide-poet/run", { method: "POST", body: JSON.stringify({ values }) });
  return [response.status, await response.text()];
}

async function signedIn(token) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
  const page = await context.newPage();
  await page.goto(`${base}/signin`);
  await page.getByLabel("Your library token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${base}/`);
  return { context, page };
}

test("an admin sets up an integration, prices and a budget; a viewer's run is charged to their team, then refused over budget", async () => {
  const { context, page } = await signedIn(admin);
  const pages = [];
  page.on("response", async (response) => pages.push(await response.text().catch(() => "")));

  // Integrations: added from the keyboard, its key never shown again; tested.
  await page.getByRole("link", { name: "Control Center" }).click();
  await page.getByRole("navigation", { name: "Control Center" }).getByRole("link", { name: "Integrations" }).click();
  await page.getByLabel("Provider", { exact: true }).focus();
  await page.keyboard.type("mock");
  await page.getByLabel("API of your server").selectOption("openai");
  await page.getByLabel("Address").fill(`http://127.0.0.1:${mock.address().port}/v1`);
  await page.getByLabel("API key").fill(KEY);
  await page.getByLabel("Models").focus();
  await page.keyboard.type("m");
  await page.keyboard.press("Enter");
  const row = page.locator('tr[data-integration="mock"]');
  await row.waitFor();
  assert.match(await row.textContent(), /…wxyz/);
  assert.equal(await page.getByLabel("API key").inputValue(), "", "the form forgets the key");
  await row.getByRole("button", { name: "Test" }).click();
  await page.locator("#status").filter({ hasText: "answered “pong and on and on" }).waitFor();
  // A long test answer is folded under its outcome: the table keeps the page's width.
  await row.locator(".last-test summary", { hasText: /^ok \(m, \d+ ms\)$/ }).waitFor();
  const widths = await page.evaluate(() => [document.querySelector("table.integrations").scrollWidth, document.querySelector("main").clientWidth]);
  assert.ok(widths[0] <= widths[1], `the table is ${widths[0]} px wide in a page of ${widths[1]}`);
  await page.screenshot({ path: join(screenshots, "integrations.png"), fullPage: true });
  assert.deepEqual(await violations(page, "tr[data-integration]"), []);

  // Prices: a negotiated price for the mock's model.
  await page.getByRole("link", { name: "Prices" }).click();
  await page.getByLabel("Model", { exact: true }).fill("mock/m");
  await page.getByLabel("Input", { exact: true }).fill("1000");
  await page.getByLabel("Output", { exact: true }).fill("2000");
  await page.getByLabel("Note").fill("contract 7");
  await page.getByRole("button", { name: "Set", exact: true }).click();
  await page.locator('tr[data-model="mock/m"]').filter({ hasText: "contract 7" }).waitFor();
  // An image model the table does not know, priced by the picture.
  await page.getByLabel("Model", { exact: true }).fill("mock/painter");
  for (const label of ["Input", "Output", "Note"]) await page.getByLabel(label, { exact: true }).fill("");
  await page.getByLabel("Per picture ($ each)").fill("0.04");
  await page.getByRole("button", { name: "Set", exact: true }).click();
  const painter = page.locator('tr[data-model="mock/painter"]');
  await painter.filter({ hasText: "$0.04 a picture" }).waitFor();
  assert.match(await painter.locator("td").nth(6).textContent(), /^\$0\.04 each$/);
  await page.screenshot({ path: join(screenshots, "prices.png"), fullPage: true });
  assert.deepEqual(await violations(page, "tr[data-model]"), []);

  // Sam's run: $2, under the team sales.
  const [status, streamed] = await samRuns();
  assert.equal(status, 200, streamed);
  assert.match(streamed, /"cost_usd":2\.0/);
  await page.getByRole("link", { name: "Spend" }).click();
  await page.locator("#teams tr").filter({ hasText: "sales" }).filter({ hasText: "$2.00" }).waitFor();
  await page.locator("#members tr").filter({ hasText: "sam@example.test" }).waitFor();
  const chart = page.locator("#days-chart svg[role=img]");
  assert.match(await chart.getAttribute("aria-labelledby"), /title .*desc/);
  assert.match(await chart.locator("desc").textContent(), /\$2\.00/);
  const csv = await page.evaluate(async () => (await fetch(document.getElementById("csv").href)).text());
  assert.match(csv, /,sales,sam@example\.test,tide-poet,mock\/m,1,1000,500,2\.000000/);
  await page.screenshot({ path: join(screenshots, "spend.png"), fullPage: true });
  assert.deepEqual(await violations(page, "#days-chart svg"), []);

  // A hard budget of $2.50 a month for sales: the next run could cost up to about $0.9 more.
  await page.getByRole("link", { name: "Budgets" }).click();
  await page.getByLabel("Team or e-mail").fill("sales");
  await page.getByLabel("Limit (US dollars)").fill("2.5");
  await page.getByRole("button", { name: "Set", exact: true }).click();
  await page.locator('tr[data-budget="team:sales"]').filter({ hasText: "80%" }).waitFor();
  await page.screenshot({ path: join(screenshots, "budgets.png"), fullPage: true });
  assert.deepEqual(await violations(page, "tr[data-budget]"), []);
  const before = asked;
  const [refused, problem] = await samRuns();
  assert.equal(refused, 402, problem);
  assert.match(problem, /over-budget/);
  assert.equal(asked, before, "the refused run reached no provider");

  // The audit log has each change.
  await page.getByRole("link", { name: "Audit log" }).click();
  await page.locator("#records tr").first().waitFor();
  const logged = await page.locator("#records").textContent();
  for (const action of ["integration.add", "price.set", "budget.set", "tag.add"]) assert.ok(logged.includes(action), `${action} in ${logged}`);
  await page.getByLabel("Action").fill("integration.add");
  await page.getByLabel("Action").press("Enter");
  await page.waitForFunction(() => document.querySelectorAll("#records tr").length === 1);
  await page.screenshot({ path: join(screenshots, "audit.png"), fullPage: true });
  assert.deepEqual(await violations(page, "#records tr"), []);

  assert.ok(!pages.some((text) => text.includes(KEY)), "the key is in no answer the studio got");
  assert.ok(!serverLog.includes(KEY), "the key is in no log line");
  await context.close();
});

test("a viewer sees their own spend and their team's budget, and no admin page", async () => {
  const { context, page } = await signedIn(sam);
  await page.getByRole("link", { name: "Spend" }).click();
  await page.locator("h1").filter({ hasText: "Your spend" }).waitFor();
  await page.locator("#members tr").filter({ hasText: "sam@example.test" }).waitFor();
  assert.equal(await page.locator("#team-field").isHidden(), true);
  assert.deepEqual(await violations(page, "#days-chart svg"), []);
  await page.getByRole("navigation", { name: "Control Center" }).getByRole("link", { name: "Budgets" }).click();
  await page.locator('tr[data-budget="team:sales"]').waitFor();
  assert.equal(await page.locator("#set").isHidden(), true);
  assert.equal(await page.getByRole("navigation", { name: "Control Center" }).getByRole("link", { name: "Integrations" }).count(), 0);
  // An admin's page is not theirs: the "admins only" page, nothing of its own.
  const refused = await page.goto(`${base}/control/integrations`);
  assert.equal(refused.status(), 404);
  await page.locator("h1", { hasText: "Admins only" }).waitFor();
  assert.equal(await page.locator("table").count(), 0);
  await context.close();
});
