// Debian's chromium, driven by playwright-core (no browser download): DESIGN.md's flags for a headless run on a
// machine without a display, a GPU or a sandbox.
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

export const chromiumPath = process.env.TESTBAY_CHROMIUM ?? "/usr/bin/chromium";

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `No browser at ${chromiumPath}: install Debian's chromium (apt-get install -y chromium) or set TESTBAY_CHROMIUM.`,
    );
  }
  return chromium.launch({
    executablePath: chromiumPath,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
