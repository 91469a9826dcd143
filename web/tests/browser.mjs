// Debian's Chromium for the browser tests, driven by Playwright (playwright-core: no browser
// download); LLMTOOL_CHROMIUM names another.

import { chromium } from "playwright-core";

export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.LLMTOOL_CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-background-networking", "--disable-dev-shm-usage"],
  });
}
