// The agents page with device pools (API.md §13), light and dark, desktop and phone, written to
// TESTBAY_SCREENSHOTS_DIR (default /tmp/testbay-agents-screenshots): to look at the page without the whole
// screenshots run. Needs the built dashboard:
//   npm run build -w packages/web && NODE_OPTIONS=--conditions=source npx tsx packages/web/scripts/agents-screenshot.ts
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { startTestServer } from "../../server/test/harness.ts";
import { launchChromium } from "../test/browser.ts";
import { createMember } from "../test/sample-data.ts";
import { devicePoolAgents, seedDevicePools } from "../test/sample-device-pools.ts";
import { requireWebBuild } from "../test/web-build.ts";

const outDir = process.env.TESTBAY_SCREENSHOTS_DIR ?? "/tmp/testbay-agents-screenshots";
const views = [
  { name: "desktop", width: 1440, height: 900 },
  { name: "phone", width: 390, height: 844 },
] as const;

requireWebBuild();
await mkdir(outDir, { recursive: true });
// Four views of one person sign in and load the page in quick succession: no rate limit in the way.
const server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
const browser = await launchChromium();
try {
  // The agent client's creation makes the organization the member joins.
  await seedDevicePools(server);
  const person = await createMember(server);
  for (const theme of ["light", "dark"] as const) {
    for (const view of views) {
      const context = await browser.newContext({
        viewport: { width: view.width, height: view.height },
        colorScheme: theme,
        deviceScaleFactor: 1,
      });
      const page = await context.newPage();
      page.on("console", (message) => {
        if (message.type() === "error") process.stderr.write(`console: ${message.text()}\n`);
      });
      page.on("pageerror", (error) => process.stderr.write(`page error: ${error.stack ?? error.message}\n`));
      await page.goto(`${server.origin}/sign-in`);
      await page.getByLabel("Email").fill(person.email);
      await page.getByLabel("Password").fill(person.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL(`${server.origin}/runs`);
      await page.goto(`${server.origin}/agents`);
      for (const agentId of Object.keys(devicePoolAgents)) {
        await page
          .getByRole("heading", { name: agentId })
          .waitFor()
          .catch(async (error) => {
            await page.screenshot({ path: path.join(outDir, "agents-pools-failed.png"), fullPage: true });
            throw error;
          });
      }
      await page.mouse.move(0, 0);
      const file = path.join(outDir, `agents-pools-${theme}-${view.width}x${view.height}.png`);
      await page.screenshot({ path: file, fullPage: true });
      process.stderr.write(`screenshot: ${file}\n`);
      await context.close();
    }
  }
} finally {
  await browser.close();
  await server.close();
}
