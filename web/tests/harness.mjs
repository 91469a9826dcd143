// What the browser tests share: starting a program and waiting for the line that says it is
// ready, and running the CLI on a test's data directory.

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";

/**
 * Starts `program` (kept in `children`, for the test to kill) and resolves with the first
 * match of `pattern` in its standard error or output.
 */
export function start(children, program, args, env, pattern) {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let seen = "";
    const look = (chunk) => {
      seen += chunk;
      const match = seen.match(pattern);
      if (match) resolve(match);
    };
    child.stdout.on("data", look);
    child.stderr.on("data", look);
    child.on("exit", (code) => reject(new Error(`${program} exited (${code}): ${seen}`)));
    // Unref-ed: a timer left waiting would hold the test process for its whole minute.
    setTimeout(() => reject(new Error(`${program} did not start: ${seen}`)), 60_000).unref();
  });
}

/** Runs `llmtool` with `args` on the data directory `data`; its output, which must be a success. */
export function cli(llmtool, data, ...args) {
  const result = spawnSync(llmtool, args, { env: { ...process.env, LLMTOOL_DATA_DIR: data }, encoding: "utf8" });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.trim();
}

/**
 * A new browser context and page on the studio at `base`, signed in with `token` (none: signed
 * out), collecting the page's script errors and console errors (4xx answers aside) in
 * `problems`. `bypassCSP` lets an audit script in past the page's Content Security Policy; other
 * `options` are the context's own (a viewport, a colour scheme).
 */
export async function openPage(browser, base, token, { bypassCSP = false, ...options } = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP, ...options });
  const opened = await context.newPage();
  const problems = [];
  opened.on("pageerror", (error) => problems.push(error.message));
  opened.on("console", (message) => message.type() === "error" && !/status of 4\d\d/.test(message.text()) && problems.push(message.text()));
  if (token) {
    await opened.goto(`${base}/signin`);
    await opened.getByLabel("Your library token").fill(token);
    await opened.getByRole("button", { name: "Sign in" }).click();
    await opened.waitForURL(`${base}/`);
  }
  return { page: opened, context, problems };
}
