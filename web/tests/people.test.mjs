// People in a real browser: Debian's Chromium (Playwright) against a real `llmtool serve` whose
// studio signs in through a real OpenID provider (`oidc-provider`, see oidc-provider.mjs) and by
// invite links, over a library with tools tagged `sales`, `support` and `all`. A member of
// `sales` sees the `sales` and `all` tools and is told 404 for the `support` one; an admin sees
// all three and manages members, teams and the built-in tools from the studio's pages. The
// single sign-on refuses an unknown e-mail, an ID token for another client, an expired one and
// a replayed code, and follows the provider's key rotation.
//
// Run by the test command after `cargo build`: node --test web/tests/
// LLMTOOL_BLESS=1 writes the screenshots into docs/teams/ (else into target/teams/).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { violations } from "./axe.mjs";
import { launchChromium } from "./browser.mjs";
import { emailOf, startProvider } from "./oidc-provider.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
// The binaries the test command built (LLMTOOL_BUILD_DIR), else the dev build.
const buildDir = process.env.LLMTOOL_BUILD_DIR ?? join(root, "target", "debug");
const llmtool = join(buildDir, "llmtool");
const screenshots = process.env.LLMTOOL_BLESS ? join(root, "docs", "teams") : join(root, "target", "teams");
const work = mkdtempSync(join(tmpdir(), "llmtool-people-test-"));
const data = join(work, "data");
const children = [];
let base;
let browser;
let provider;
let admin;

function cli(...args) {
  const result = spawnSync(llmtool, args, { env: { ...process.env, LLMTOOL_DATA_DIR: data }, encoding: "utf8" });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.trim();
}

/** A loopback port nobody listens on now. */
function freePort() {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** A tool file named `name`: the Teach Me Anything example with another name. */
function toolFile(name) {
  const tool = JSON.parse(readFileSync(join(root, "examples", "teach-me-anything.json"), "utf8"));
  tool.metadata.prompt_name = name;
  tool.metadata.description = `${name}, curated for a team.`;
  return JSON.stringify(tool);
}

async function asAdmin(path, init = {}) {
  const response = await fetch(`${base}/api/v1${path}`, {
    ...init,
    headers: { authorization: `Bearer ${admin}`, "content-type": "application/json", ...init.headers },
  });
  assert.ok(response.ok, `${init.method || "GET"} ${path}: ${response.status} ${await response.clone().text()}`);
  return response;
}

before(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  provider = await startProvider(`${base}/signin/sso/callback`);
  const config = join(work, "config.toml");
  writeFileSync(
    config,
    `[server]\npublic_url = "${base}"\n\n[server.sso]\nissuer = "${provider.issuer}"\nclient_id = "${provider.clientId}"\nclient_secret_env = "SSO_CLIENT_SECRET"\nallowed_domains = ["example.test"]\n`,
  );
  admin = cli("token", "create", "ops", "--role", "admin");
  cli("team", "create", "sales");
  cli("team", "create", "support");
  cli("member", "add", "sam@example.test", "--name", "Sam Seller", "--team", "sales");
  cli("member", "add", "ivy@example.test", "--name", "Ivy Invited", "--team", "support");
  const env = { ...process.env, LLMTOOL_DATA_DIR: data, LLMTOOL_NO_LOG: "1", SSO_CLIENT_SECRET: provider.clientSecret };
  const server = spawn(llmtool, ["serve", "--listen", `127.0.0.1:${port}`, "--config", config], { env, stdio: ["ignore", "ignore", "pipe"] });
  children.push(server);
  await new Promise((resolve, reject) => {
    let seen = "";
    server.stderr.on("data", (chunk) => {
      seen += chunk;
      if (seen.includes("llmtool serve: http://")) resolve();
    });
    server.on("exit", (code) => reject(new Error(`llmtool serve exited (${code}): ${seen}`)));
  });
  for (const [slug, name, tag] of [["sales-pitch", "Sales Pitch", "sales"], ["support-triage", "Support Triage", "support"], ["for-everyone", "For Everyone", null]]) {
    await asAdmin(`/tools?slug=${slug}`, { method: "POST", body: toolFile(name) });
    if (tag) {
      await asAdmin(`/tools/${slug}/tags/${tag}`, { method: "PUT" });
      await asAdmin(`/tools/${slug}/tags/all`, { method: "DELETE" });
    }
  }
  browser = await launchChromium();
  mkdirSync(screenshots, { recursive: true });
});

after(async () => {
  await browser?.close();
  await provider?.close();
  for (const child of children) child.kill("SIGKILL");
});

async function fresh({ bypassCSP = false } = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP });
  return { context, page: await context.newPage() };
}

/** Signs in through the OpenID provider as `login`; resolves on the page the studio lands on. */
async function singleSignOn(page, login) {
  await page.goto(`${base}/signin`);
  await page.getByRole("link", { name: "Sign in with single sign-on" }).click();
  await page.waitForURL(`${provider.issuer}/**`);
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.waitForURL(`${base}/**`);
  await page.waitForLoadState("networkidle");
}

async function cardNames(page) {
  await page.locator(".card").first().waitFor();
  return page.locator(".card h2").allTextContents();
}

test("a member of sales signs in through the OpenID provider and sees the sales and all tools, and 404 for support's", async () => {
  const { context, page } = await fresh();
  await singleSignOn(page, "sam");
  await page.waitForURL(`${base}/`);
  await page.locator(".who").filter({ hasText: "sam@example.test (viewer)" }).waitFor();
  const names = await cardNames(page);
  assert.ok(names.includes("Sales Pitch") && names.includes("For Everyone"), names.join(", "));
  assert.ok(!names.includes("Support Triage"), names.join(", "));
  await page.screenshot({ path: join(screenshots, "member-gallery.png") });
  const missing = await page.goto(`${base}/t/support-triage`);
  assert.equal(missing.status(), 404);
  const seen = await page.evaluate(async () => [
    (await fetch("/api/v1/tools/support-triage")).status,
    (await fetch("/api/v1/tools/sales-pitch")).status,
  ]);
  assert.deepEqual(seen, [404, 200]);
  await context.close();
});

test("an admin sees all three tools, and manages members, teams and the built-in tools from the studio", async () => {
  const { context, page } = await fresh({ bypassCSP: true });
  await page.goto(`${base}/signin`);
  await page.getByLabel("Your library token").fill(admin);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${base}/`);
  const names = await cardNames(page);
  for (const name of ["Sales Pitch", "Support Triage", "For Everyone"]) assert.ok(names.includes(name), names.join(", "));

  // Members: add one, change their role and teams, see a CSV with a bad row refused by line.
  await page.getByRole("link", { name: "People" }).click();
  await page.locator('tr[data-email="sam@example.test"]').waitFor();
  await page.getByLabel("E-mail").fill("lee@example.test");
  await page.getByLabel("Name", { exact: true }).fill("Lee Lin");
  await page.getByLabel("Teams", { exact: true }).fill("support");
  await page.getByRole("button", { name: "Add" }).click();
  const lee = page.locator('tr[data-email="lee@example.test"]');
  await lee.waitFor();
  await page.getByLabel("Role of lee@example.test").selectOption("editor");
  await page.getByLabel("Teams of lee@example.test").fill("support sales");
  await lee.getByRole("button", { name: "Save" }).click();
  await page.locator("#status").filter({ hasText: "Saved lee@example.test." }).waitFor();
  const edited = await (await asAdmin("/members/lee@example.test")).json();
  assert.deepEqual([edited.role, edited.teams], ["editor", ["sales", "support"]]);
  // This server has no SMTP server: the invite is a link to copy, which signs Lee in.
  await lee.getByRole("button", { name: "Invite" }).click();
  await page.locator("#status").filter({ hasText: "This server sends no mail: copy" }).waitFor();
  const invite = await page.getByLabel("Sign-in link of lee@example.test").inputValue();
  assert.match(invite, /\/signin\/invite#[0-9a-f]{64}$/);
  const leeBrowser = await browser.newContext();
  const leePage = await leeBrowser.newPage();
  await leePage.goto(invite);
  await leePage.getByRole("button", { name: "Sign in" }).click();
  await leePage.waitForURL(`${base}/`);
  await leePage.locator("header .who", { hasText: "lee@example.test" }).waitFor();
  await leeBrowser.close();
  const good = join(work, "good.csv");
  writeFileSync(good, "email,name,role,teams\nkim@example.test,Kim,viewer,sales\n");
  await page.getByLabel("CSV file", { exact: true }).setInputFiles(good);
  await page.getByLabel("Only check it").check();
  await page.getByRole("button", { name: "Import" }).click();
  await page.locator("#status").filter({ hasText: "1 member would be added" }).waitFor();
  await page.getByLabel("Only check it").uncheck();
  const csv = join(work, "people.csv");
  writeFileSync(csv, "email,name,role,teams\nkim@example.test,Kim,viewer,sales\nnot-an-address,Bad,viewer,\n");
  await page.getByLabel("CSV file", { exact: true }).setInputFiles(csv);
  await page.getByRole("button", { name: "Import" }).click();
  await page.locator("#import-problems li").filter({ hasText: "line 3" }).waitFor();
  assert.equal((await fetch(`${base}/api/v1/members/kim@example.test`, { headers: { authorization: `Bearer ${admin}` } })).status, 404, "nothing imported");
  await page.screenshot({ path: join(screenshots, "people.png"), fullPage: true });
  assert.deepEqual(await violations(page, "tr[data-email]"), []);
  page.once("dialog", (dialog) => dialog.accept());
  await lee.getByRole("button", { name: "Remove" }).click();
  await lee.waitFor({ state: "detached" });

  // Teams: make one, rename it, remove it; switch the built-in tools off for members.
  await page.getByRole("link", { name: "Teams" }).click();
  await page.getByLabel("Name", { exact: true }).fill("ops");
  await page.getByRole("button", { name: "Make" }).click();
  await page.locator('tr[data-team="ops"]').waitFor();
  await page.getByLabel("New name of ops").fill("operations");
  await page.locator('tr[data-team="ops"]').getByRole("button", { name: "Rename" }).click();
  await page.locator('tr[data-team="operations"]').waitFor();
  page.once("dialog", (dialog) => dialog.accept());
  await page.locator('tr[data-team="operations"]').getByRole("button", { name: "Remove" }).click();
  await page.locator('tr[data-team="operations"]').waitFor({ state: "detached" });
  await page.getByLabel("Members see the built-in tools").uncheck();
  await page.locator("#status").filter({ hasText: "switched off" }).waitFor();
  await page.screenshot({ path: join(screenshots, "teams.png"), fullPage: true });
  assert.deepEqual(await violations(page, "tr[data-team]"), []);
  const member = await fresh();
  await singleSignOn(member.page, "sam");
  const seenBySam = await cardNames(member.page);
  assert.ok(!seenBySam.includes("Teach Me Anything") && seenBySam.includes("Sales Pitch"), seenBySam.join(", "));
  await page.goto(base);
  assert.ok((await cardNames(page)).includes("Teach Me Anything"), "admins still see them");
  await page.goto(`${base}/teams`);
  await page.getByLabel("Members see the built-in tools").check();
  await page.locator("#status").filter({ hasText: "again" }).waitFor();
  await member.context.close();
  await context.close();
});

test("a first sign-in at an allowed domain makes a viewer; an unknown e-mail is refused", async () => {
  const newcomer = await fresh();
  await singleSignOn(newcomer.page, "newbie");
  await newcomer.page.locator(".who").filter({ hasText: "newbie@example.test (viewer)" }).waitFor();
  const names = await cardNames(newcomer.page);
  assert.ok(names.includes("For Everyone") && !names.includes("Sales Pitch"), names.join(", "));
  await newcomer.context.close();

  const stranger = await fresh();
  await singleSignOn(stranger.page, "stranger");
  await stranger.page.locator("#status").filter({ hasText: `no member of this library has the e-mail \`${emailOf("stranger")}\`` }).waitFor();
  assert.equal(await stranger.page.evaluate(async () => (await fetch("/api/v1/session")).status), 401);
  await stranger.context.close();
});

test("an address that only looks like an admin's signs in as nobody", async () => {
  cli("member", "add", "kim@example.test", "--name", "Kim Keeper", "--role", "admin");
  // KELVIN SIGN, which Unicode's lower case makes an ASCII `k`: it signed in as kim, an admin.
  const lookalike = await fresh();
  await singleSignOn(lookalike.page, "\u212Aim");
  await lookalike.page.locator("#status").filter({ hasText: "no member of this library has the e-mail" }).waitFor();
  assert.equal(await lookalike.page.evaluate(async () => (await fetch("/api/v1/session")).status), 401);
  await lookalike.context.close();
  cli("member", "remove", "kim@example.test");
});

test("an ID token for another client, or one that expired, signs nobody in", async () => {
  for (const [fault, said] of [["audience", /Invalid audiences/], ["expired", /Expired/]]) {
    provider.setFault(fault);
    const { context, page } = await fresh();
    try {
      await singleSignOn(page, "sam");
      const status = await page.locator("#status").textContent();
      assert.match(status, /Sign-in failed: the identity provider's ID token is not valid here/);
      assert.match(status, said);
      assert.equal(await page.evaluate(async () => (await fetch("/api/v1/session")).status), 401);
    } finally {
      provider.setFault(null);
      await context.close();
    }
  }
});

test("a replayed code signs in nobody, whether its state is spent or fresh", async () => {
  const { context, page } = await fresh();
  let callback = null;
  page.on("request", (request) => {
    if (request.url().startsWith(`${base}/signin/sso/callback`)) callback = request.url();
  });
  await singleSignOn(page, "sam");
  assert.ok(callback, "the provider sent the browser back");
  await page.goto(callback);
  await page.locator("#status").filter({ hasText: "unknown, expired or used already" }).waitFor();
  // Nobody else's words reach the page: an error without this browser's sign-in is unknown.
  await page.goto(`${base}/signin/sso/callback?error=access_denied&error_description=call+0800+now&state=made-up`);
  const said = await page.locator("#status").textContent();
  assert.match(said, /unknown, expired or used already/);
  assert.ok(!said.includes("0800"), said);

  // The old code with a state of this browser's that was never spent: the provider refuses it.
  const attacker = await fresh();
  await attacker.page.route(`${provider.issuer}/**`, (route) => route.abort());
  const started = attacker.page.waitForResponse((response) => response.url().startsWith(`${base}/signin/sso?`));
  await attacker.page.goto(`${base}/signin/sso?next=/`).catch(() => {});
  const state = new URL((await started).headers().location).searchParams.get("state");
  const code = new URL(callback).searchParams.get("code");
  await attacker.page.goto(`${base}/signin/sso/callback?code=${encodeURIComponent(code)}&state=${encodeURIComponent(state)}`);
  await attacker.page.locator("#status").filter({ hasText: "did not accept the sign-in's code" }).waitFor();
  assert.equal(await attacker.page.evaluate(async () => (await fetch("/api/v1/session")).status), 401);
  await attacker.context.close();
  await context.close();
});

test("after the provider rotates its keys, signing in still works", async () => {
  provider.rotateKeys();
  const { context, page } = await fresh();
  await singleSignOn(page, "sam");
  await page.locator(".who").filter({ hasText: "sam@example.test" }).waitFor();
  await context.close();
});

test("an invite's link signs its member in once, in the browser", async () => {
  const link = cli("member", "invite", "ivy@example.test", "--print-link", "--public-url", base);
  const { context, page } = await fresh({ bypassCSP: true });
  await page.goto(link);
  assert.equal(new URL(page.url()).hash, "", "the secret leaves the address bar");
  await page.screenshot({ path: join(screenshots, "invite.png") });
  assert.deepEqual(await violations(page, "#accept"), []);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${base}/`);
  await page.locator(".who").filter({ hasText: "ivy@example.test (viewer)" }).waitFor();
  const names = await cardNames(page);
  assert.ok(names.includes("Support Triage") && !names.includes("Sales Pitch"), names.join(", "));
  const again = await fresh();
  await again.page.goto(link);
  await again.page.getByRole("button", { name: "Sign in" }).click();
  await again.page.locator("#status").filter({ hasText: "was used already" }).waitFor();
  await again.context.close();
  await context.close();
});
