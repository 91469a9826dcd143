// Curating tools for teams in Chromium against a real `llmtool serve` (`/control/curate`):
// a box ticked shows a tool to a team, tools picked together change at once, and `all` taken
// off hides a tool from everyone but its teams; each change lands in the library's tags and
// its audit log.
//
// Run by the test command after `cargo build`: node --test web/tests/

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { violations } from "./axe.mjs";
import { launchChromium } from "./browser.mjs";
import { cli as runCli, openPage, start as startProgram } from "./harness.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const buildDir = process.env.LLMTOOL_BUILD_DIR ?? join(root, "target", "debug");
const llmtool = join(buildDir, "llmtool");
const work = mkdtempSync(join(tmpdir(), "llmtool-curate-test-"));
const data = join(work, "data");
const children = [];
let base;
let browser;
let admin;

const cli = (...args) => runCli(llmtool, data, ...args);

/** The API's answer to `GET path` with the admin's token, as JSON. */
async function get(path) {
  const answer = await fetch(`${base}/api/v1${path}`, { headers: { authorization: `Bearer ${admin}` } });
  return answer.json();
}

before(async () => {
  cli("team", "create", "sales");
  cli("team", "create", "support");
  admin = cli("token", "create", "ada", "--role", "admin");
  const env = { LLMTOOL_DATA_DIR: data, LLMTOOL_NO_LOG: "1" };
  const [, address] = await startProgram(children, llmtool, ["serve", "--listen", "127.0.0.1:0"], env, /llmtool serve: http:\/\/([\d.:]+)\/api\/v1/);
  base = `http://${address}`;
  for (const [slug, name] of [["poet", "Poet"], ["deal-poet", "Deal Poet"]]) {
    const tool = { model_prompt: "A poem about {{topic}}.", metadata: { prompt_name: name, description: "Writes.", timestamp: "2026-11-23T10:00:00Z", variables: [{ name: "topic", type: "text", description: "What about." }] } };
    const made = await fetch(`${base}/api/v1/tools?slug=${slug}`, { method: "POST", headers: { authorization: `Bearer ${admin}` }, body: JSON.stringify(tool) });
    assert.equal(made.status, 201);
  }
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  for (const child of children) child.kill("SIGKILL");
});

test("an admin shows tools to teams one by one and in bulk, and hides one from everyone", async () => {
  const { page, problems } = await openPage(browser, base, admin, { bypassCSP: true });
  await page.goto(`${base}/control/curate`);
  await page.getByRole("link", { name: "Curate tools", exact: true }).waitFor();
  const dealForSales = page.getByRole("checkbox", { name: "Deal Poet: sales" });
  await dealForSales.check();
  await page.getByText("deal-poet shown to the team sales.").waitFor();
  assert.deepEqual((await get("/tools/deal-poet")).tags.sort(), ["all", "sales"]);

  await page.getByRole("checkbox", { name: "Pick Poet", exact: true }).check();
  await page.getByRole("checkbox", { name: "Pick Deal Poet" }).check();
  await page.getByLabel("For the selected tools").selectOption("support");
  await page.getByRole("button", { name: "Show to it" }).click();
  await page.getByText("2 tools shown to the team support.").waitFor();
  assert.ok((await get("/tools/poet")).tags.includes("support"));
  assert.ok((await get("/tools/deal-poet")).tags.includes("support"));

  await page.getByRole("checkbox", { name: "Poet: everyone", exact: true }).uncheck();
  await page.getByText("poet hidden from every member.").waitFor();
  assert.deepEqual((await get("/tools/poet")).tags.sort(), ["support"]);
  const audit = await get("/audit?action=tag.remove");
  assert.ok(audit.records.some((record) => record.target === "poet"), JSON.stringify(audit));
  assert.deepEqual(await violations(page, "table.curate"), []);
  assert.deepEqual(problems, []);
});
