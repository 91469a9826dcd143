// A member's own tokens and a terminal's sign-in, in Chromium against a real `llmtool serve`:
// the Tokens page makes a token (shown once) that works in the CLI at once and is refused once
// revoked there; and `llmtool login URL` prints a code and the `/device` page, where the signed-in
// member allows it, after which the terminal is signed in as that member.
//
// Run by the test command after `cargo build`: node --test web/tests/

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
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
const work = mkdtempSync(join(tmpdir(), "llmtool-tokens-test-"));
const data = join(work, "data");
const children = [];
let base;
let browser;
let sams;

const cli = (...args) => runCli(llmtool, data, ...args);

before(async () => {
  cli("team", "create", "sales");
  cli("member", "add", "sam@example.test", "--role", "editor", "--team", "sales");
  sams = cli("token", "create", "sam-studio", "--member", "sam@example.test");
  const env = { LLMTOOL_DATA_DIR: data, LLMTOOL_NO_LOG: "1" };
  const [, address] = await startProgram(children, llmtool, ["serve", "--listen", "127.0.0.1:0"], env, /llmtool serve: http:\/\/([\d.:]+)\/api\/v1/);
  base = `http://${address}`;
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  for (const child of children) child.kill("SIGKILL");
});

/** `llmtool whoami` against the library with `token`: its exit status and output. */
function whoami(token) {
  const env = { ...process.env, LLMTOOL_DATA_DIR: data, LLMTOOL_REGISTRY: base, LLMTOOL_TOKEN: token, XDG_CONFIG_HOME: join(work, "no-config") };
  return spawnSync(llmtool, ["whoami"], { env, encoding: "utf8" });
}

test("the Tokens page makes a token shown once, which works in the CLI until it is revoked there", async () => {
  const { page, problems } = await openPage(browser, base, sams, { bypassCSP: true });
  await page.getByRole("link", { name: "Tokens" }).click();
  await page.waitForURL(`${base}/tokens`);
  await page.getByRole("rowheader", { name: "sam-studio" }).waitFor();
  await page.getByLabel("Name").fill("sam-laptop");
  await page.getByLabel("Days it works").fill("7");
  await page.getByRole("button", { name: "Make the token" }).click();
  const shown = page.getByLabel("The new token");
  await shown.waitFor();
  const token = await shown.inputValue();
  assert.match(token, /^llmt_[0-9a-f]{64}$/);
  // It works in the CLI at once...
  const signed = whoami(token);
  assert.equal(signed.status, 0, signed.stderr);
  assert.match(signed.stdout, /sam@example\.test \(editor; teams sales\), token `sam-laptop`/);
  const row = page.getByRole("row", { name: /sam-laptop/ });
  assert.match(await row.innerText(), /editor/);
  assert.deepEqual(await violations(page, "table"), []);
  await page.getByRole("button", { name: "Revoke sam-laptop" }).click();
  await row.getByText("revoked").waitFor();
  // ...and is refused once revoked.
  const refused = whoami(token);
  assert.equal(refused.status, 2, refused.stdout);
  assert.match(refused.stderr, /does not know this token/);
  assert.deepEqual(problems, []);
});

test("llmtool login shows a code that the member allows on /device, and the terminal is signed in", async () => {
  const config = join(work, "config");
  const login = spawn(llmtool, ["login", base, "--no-browser"], {
    env: { ...process.env, LLMTOOL_DATA_DIR: data, XDG_CONFIG_HOME: config, LLMTOOL_TOKEN: "", LLMTOOL_REGISTRY: "" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.push(login);
  let said = "";
  login.stderr.on("data", (chunk) => { said += chunk; });
  const ended = new Promise((resolve) => login.on("exit", resolve));
  while (!/allow the code/.test(said)) await new Promise((resolve) => setTimeout(resolve, 50));
  const address = said.match(/open (\S+\/device\?code=[A-Z-]+)/)[1];
  const code = address.split("code=")[1];

  const { page, problems } = await openPage(browser, base, sams, { bypassCSP: true });
  await page.goto(address);
  await page.getByText(code, { exact: true }).waitFor();
  await page.getByText(/llmtool on /).waitFor();
  assert.deepEqual(await violations(page, "main button"), []);
  await page.getByRole("button", { name: "Allow" }).click();
  await page.getByRole("heading", { name: "Terminal signed in" }).waitFor();
  assert.equal(await ended, 0, said);
  assert.match(said, /signed in to .* as sam@example\.test \(editor; teams sales\)/);
  assert.deepEqual(problems, []);
});
