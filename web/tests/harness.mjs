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
