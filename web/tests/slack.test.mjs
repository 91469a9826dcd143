// Slack in the studio, in a real browser: Debian's Chromium (Playwright) against a real
// `llmtool serve` whose Slack Web API is a stand-in on loopback (below), which also plays
// Slack's "Add to Slack" page (it approves at once and sends the browser back with a code).
// The stand-in is reached as `localhost` and the studio as `127.0.0.1`: two sites, as Slack's
// and the studio's are, so the session cookie (`SameSite=Strict`) does not come back with
// Slack's redirect, as it would not from Slack's own page.
// An admin gives the app's credentials on the Control Center's integrations page and adds it
// to Slack: the OAuth round trip ends on the same page, saying Slack is added, with no secret
// in any page. A member then connects a conversation of theirs to a channel the app is in:
// its turns are posted in a thread; disconnected, the panel offers to connect again. Both
// pages pass axe-core.
//
// Run by the test command after `cargo build`: node --test web/tests/

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { violations } from "./axe.mjs";
import { launchChromium } from "./browser.mjs";
import { cli, openPage } from "./harness.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const buildDir = process.env.LLMTOOL_BUILD_DIR ?? join(root, "target", "debug");
const llmtool = join(buildDir, "llmtool");
const work = mkdtempSync(join(tmpdir(), "llmtool-slack-test-"));
const data = join(work, "data");
const CLIENT_SECRET = "slack-client-secret-7731";
const SIGNING_SECRET = "slack-signing-secret-7731";
const BOT_TOKEN = "xoxb-browser-test-bot-token";
const children = [];
const calls = [];
let base;
let browser;
let provider;
let slack;
let admin;
let sam;

/** A server on a loopback port that answers with `handle(request, body, response)`. */
function serve(handle) {
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => handle(request, body, response));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

/** Slack's Web API (`/api/METHOD`, every call recorded) and its "Add to Slack" page. */
function slackStandIn() {
  return serve((request, body, response) => {
    const url = new URL(request.url, "http://stand-in");
    if (url.pathname === "/oauth/v2/authorize") {
      // Slack's page, approved at once: back to the app's redirect with a code and the state.
      const back = new URL(url.searchParams.get("redirect_uri"));
      back.searchParams.set("code", "browser-code");
      back.searchParams.set("state", url.searchParams.get("state"));
      response.writeHead(302, { location: back.href }).end();
      return;
    }
    const method = url.pathname.replace("/api/", "");
    const args = request.headers["content-type"]?.startsWith("application/json") ? JSON.parse(body || "{}") : Object.fromEntries(new URLSearchParams(body));
    calls.push({ method, args, authorization: request.headers.authorization });
    const answers = {
      "oauth.v2.access": args.code === "browser-code" && args.client_secret === CLIENT_SECRET ? { ok: true, access_token: BOT_TOKEN, bot_user_id: "UAPP", team: { id: "T1", name: "Acme" } } : { ok: false, error: "invalid_code" },
      "users.conversations": { ok: true, channels: [{ id: "CSALES", name: "sales" }, { id: "CRANDOM", name: "random" }] },
      "chat.postMessage": { ok: true, ts: `1700000000.${String(calls.length).padStart(6, "0")}` },
      "auth.test": { ok: true, user_id: "UAPP", team_id: "T1" },
    };
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answers[method] ?? { ok: true }));
  });
}

/** An OpenAI-compatible provider that streams one answer. */
function mockProvider() {
  return serve((request, body, response) => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "Tides turn twice a day." } }] })}\n\n`);
    response.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 5 } })}\n\n`);
    response.end("data: [DONE]\n\n");
  });
}

/** A free loopback port: the server's public address must be known before it starts. */
async function freePort() {
  const probe = await serve(() => {});
  const port = probe.address().port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function call(token, path, init = {}) {
  return fetch(`${base}/api/v1${path}`, { ...init, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...init.headers } });
}

before(async () => {
  provider = await mockProvider();
  slack = await slackStandIn();
  cli(llmtool, data, "member", "add", "ada@example.test", "--name", "Ada Admin", "--role", "admin");
  cli(llmtool, data, "member", "add", "sam@example.test", "--name", "Sam Seller");
  // "Add to Slack" ends in the browser of the admin who started it: a member's session.
  admin = cli(llmtool, data, "token", "create", "ada-laptop", "--member", "ada@example.test");
  sam = cli(llmtool, data, "token", "create", "sam-laptop", "--member", "sam@example.test");
  const config = join(work, "config.toml");
  writeFileSync(config, `[providers.mock]\napi = "openai"\nbase_url = "http://127.0.0.1:${provider.address().port}/v1"\napi_key_env = "MOCK_KEY"\n`);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const env = { LLMTOOL_DATA_DIR: data, LLMTOOL_NO_LOG: "1", MOCK_KEY: "mock-key-1" };
  const args = ["serve", "--listen", `127.0.0.1:${port}`, "--config", config, "--public-url", base, "--slack-api-url", `http://localhost:${slack.address().port}/api`];
  await new Promise((resolve, reject) => {
    const server = spawn(llmtool, args, { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
    children.push(server);
    let log = "";
    server.stderr.on("data", (chunk) => {
      log += chunk;
      if (log.includes("llmtool serve: http://")) resolve();
    });
    server.on("exit", (code) => reject(new Error(`llmtool serve exited (${code}): ${log}`)));
  });
  const tool = { model_prompt: "Write about {{topic}}.", metadata: { prompt_name: "Tide Poet", description: "Writes.", model_version: ["mock/m"], timestamp: "2026-12-05T10:00:00Z", variables: [{ name: "topic", type: "text", description: "What about." }] } };
  const published = await call(admin, "/tools?slug=tide-poet", { method: "POST", body: JSON.stringify(tool) });
  assert.equal(published.status, 201, await published.text());
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  provider?.close();
  slack?.close();
  for (const child of children) child.kill("SIGKILL");
});

test("an admin adds Slack through its OAuth page, and a member connects a conversation to a channel", async () => {
  const { page, context, problems } = await openPage(browser, base, admin, { bypassCSP: true });
  const seen = [];
  page.on("response", async (response) => seen.push(await response.text().catch(() => "")));
  await page.goto(`${base}/control/integrations`);
  const section = page.locator("#slack");
  await section.getByText("Not set up.").waitFor();
  await section.getByLabel("Client id").fill("123.456");
  await section.getByLabel("Client secret").fill(CLIENT_SECRET);
  await section.getByLabel("Signing secret").fill(SIGNING_SECRET);
  await section.getByRole("button", { name: "Set up" }).click();
  await page.locator("#status").filter({ hasText: "“Add to Slack” installs it" }).waitFor();
  await section.getByText("Off: not added to Slack yet.").waitFor();
  assert.equal(await section.getByLabel("Client secret").inputValue(), "", "the form forgets the secret");
  assert.deepEqual(await violations(page, "#slack-state"), []);

  // "Add to Slack": Slack's page (the stand-in's) sends the browser back; the page says so.
  await section.getByRole("button", { name: "Add to Slack" }).click();
  await page.waitForURL(`${base}/control/integrations`);
  await page.locator("#status").filter({ hasText: "Slack is added" }).waitFor();
  await section.getByText("Added to the workspace Acme by ada@example.test").waitFor();
  const traded = calls.filter((c) => c.method === "oauth.v2.access");
  assert.equal(traded.length, 1);
  assert.equal(traded[0].args.redirect_uri, `${base}/slack/oauth/callback`);
  for (const secret of [CLIENT_SECRET, SIGNING_SECRET, BOT_TOKEN]) {
    assert.ok(!seen.some((text) => text.includes(secret)), `a page or answer holds ${secret}`);
  }
  assert.deepEqual(problems, []);
  await context.close();

  // Sam's conversation, connected to #sales from its page.
  const run = await call(sam, "/tools/tide-poet/run", { method: "POST", body: JSON.stringify({ values: { topic: "tides" } }) });
  const conversation = (await run.text()).match(/"conversation":"([^"]+)"/)[1];
  const member = await openPage(browser, base, sam, { bypassCSP: true });
  await member.page.goto(`${base}/c/${conversation}`);
  const panel = member.page.getByRole("region", { name: "Slack" });
  await panel.getByRole("button", { name: "Connect to a Slack channel" }).click();
  await panel.getByLabel("Channel").selectOption("CSALES");
  await panel.getByRole("button", { name: "Connect", exact: true }).click();
  await member.page.locator("#status").filter({ hasText: "Connected to #sales" }).waitFor();
  await panel.getByText("Connected to the channel CSALES").waitFor();
  assert.deepEqual(await violations(member.page, "section.slack"), []);
  const deadline = Date.now() + 20_000;
  while (calls.filter((c) => c.method === "chat.postMessage").length < 3 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const posted = calls.filter((c) => c.method === "chat.postMessage");
  assert.equal(posted.length, 3, JSON.stringify(posted));
  assert.ok(posted.every((c) => c.args.channel === "CSALES" && c.authorization === `Bearer ${BOT_TOKEN}`));
  assert.match(JSON.stringify(posted[2].args.blocks), /Tides turn twice a day/);

  await panel.getByRole("button", { name: "Disconnect" }).click();
  await panel.getByRole("button", { name: "Connect to a Slack channel" }).waitFor();
  assert.deepEqual(member.problems, []);
  await member.context.close();
});
