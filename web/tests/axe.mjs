// axe-core's audit of a page, shared by the browser tests.

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const axeSource = readFileSync(join(dirname(fileURLToPath(import.meta.url)), "..", "node_modules", "axe-core", "axe.min.js"), "utf8");

/**
 * axe-core's serious and critical violations on the page `opened` shows, once `ready` (a
 * selector) is on it. The page's context must let the audit script in past the page's
 * Content Security Policy (`bypassCSP`).
 */
export async function violations(opened, ready) {
  if (ready) await opened.locator(ready).first().waitFor();
  await opened.addScriptTag({ content: axeSource });
  const result = await opened.evaluate(() => window.axe.run(document, { resultTypes: ["violations"] }));
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`);
}
