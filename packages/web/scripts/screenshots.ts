// Screenshots of every dashboard page, light and dark, at a desktop (1440×900) and a phone (390×844) size, written
// to docs/screenshots/ for people to look at (and for the README). Starts a server with sample runs, then opens
// the built dashboard in Debian's chromium:
//   npm run build && npm run screenshots -w packages/web
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { ManualClock } from "../../server/src/clock.ts";
import { startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "../test/browser.ts";
import { ciHeaders, createMember, type Person, seedDeviceRun, seedInspectRuns } from "../test/sample-data.ts";
import { requireWebBuild } from "../test/web-build.ts";

const outDir = fileURLToPath(new URL("../../../docs/screenshots/", import.meta.url));

const sizes = [
  { name: "desktop", width: 1440, height: 900 },
  { name: "phone", width: 390, height: 844 },
] as const;
const themes = ["light", "dark"] as const;

interface Sample {
  server: TestServer;
  person: Person;
  failedRun: string;
  liveRun: string;
}

async function seed(): Promise<Sample> {
  // The server's clock starts 40 minutes ago and moves as the sample runs do (about as much), so times and
  // durations look real and the live run started a moment ago.
  const clock = new ManualClock(Date.now() - 40 * 60 * 1000);
  const server = await startTestServer({ clock, env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  const ci = await ciHeaders(server);
  const person = await createMember(server);
  await seedInspectRuns(server, ci);
  clock.advance(15 * 60 * 1000);
  const failedRun = await seedDeviceRun(server, ci, { finish: true, branch: "main" });
  clock.advance(20 * 60 * 1000);
  const liveRun = await seedDeviceRun(server, ci, {
    finish: false,
    branch: "feature/checkout-v2",
    version: "1.3.0",
  });
  return { server, person, failedRun, liveRun };
}

async function signIn(page: Page, origin: string, person: Person): Promise<void> {
  await page.goto(`${origin}/sign-in`);
  await page.getByLabel("Email").fill(person.email);
  await page.getByLabel("Password").fill(person.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${origin}/runs`);
}

async function shoot(page: Page, name: string): Promise<void> {
  const file = path.join(outDir, `${name}.png`);
  // The pointer rests in a corner: a row it last clicked would show as hovered.
  await page.mouse.move(0, 0);
  await page.screenshot({ path: file, fullPage: true });
  process.stderr.write(`screenshots: ${path.relative(process.cwd(), file)}\n`);
}

async function pages(browser: Browser, sample: Sample): Promise<void> {
  const { origin } = sample.server;
  for (const theme of themes) {
    for (const size of sizes) {
      const context = await browser.newContext({
        viewport: { width: size.width, height: size.height },
        colorScheme: theme,
        deviceScaleFactor: 1,
      });
      const page = await context.newPage();
      const suffix = `${theme}-${size.width}x${size.height}`;

      await page.goto(`${origin}/sign-in`);
      await page.getByRole("heading", { name: "Sign in to Testbay" }).waitFor();
      await shoot(page, `sign-in-${suffix}`);

      await signIn(page, origin, sample.person);
      await page.locator("tbody tr").nth(3).waitFor();
      await shoot(page, `runs-${suffix}`);

      await page.goto(`${origin}/runs/${sample.failedRun}`);
      await page.getByRole("heading", { name: /Failed tests \(2\)/ }).waitFor();
      await page.getByRole("heading", { name: /All tests \(120\)/ }).waitFor();
      // The first failure's stack trace open, as a reader would have it.
      await page.getByText("Stack trace").first().click();
      // The log comes in its own request: a full-page shot taken before it lands is cut short.
      await page.getByText("Tests run: 60").last().waitFor();
      await shoot(page, `run-failed-${suffix}`);

      await page.goto(`${origin}/runs/${sample.liveRun}`);
      await page.getByRole("heading", { name: /All tests \(\d+\)/ }).waitFor();
      await page.getByText("Tests run: 24").waitFor();
      await shoot(page, `run-live-${suffix}`);

      await page.goto(`${origin}/plans`);
      // A table from 640 px, cards on a phone: wait for whichever shows.
      await page.getByRole("link", { name: "Release gate: target SDK" }).waitFor();
      await shoot(page, `plans-${suffix}`);

      await page.getByRole("link", { name: "Checkout: instrumentation (main)" }).click();
      await page.getByRole("heading", { name: "Checkout: instrumentation (main)" }).waitFor();
      await page.getByRole("button", { name: "Trigger", exact: true }).waitFor();
      await page.getByRole("option", { name: /1\.3\.0/ }).waitFor({ state: "attached" });
      await shoot(page, `plan-${suffix}`);

      // The form as a person sees it after the API refused it: the messages at their fields.
      await page.goto(`${origin}/plans/new`);
      await page.getByLabel("Name").fill("Nightly regression");
      await page.getByRole("button", { name: "Add a device" }).click();
      await page.getByLabel("Device 1 model").fill("Pixel 8");
      await page.getByLabel("Timeout (seconds)").fill("5");
      await page.getByRole("button", { name: "Create plan" }).click();
      await page.getByText("see the messages at the fields below").waitFor();
      await shoot(page, `plan-form-error-${suffix}`);

      await page.goto(`${origin}/agents`);
      await page.getByRole("heading", { name: "lab-mac-mini" }).waitFor();
      await shoot(page, `agents-${suffix}`);
      await context.close();
    }
  }
}

requireWebBuild();
await mkdir(outDir, { recursive: true });
const sample = await seed();
const browser = await launchChromium();
try {
  await pages(browser, sample);
} finally {
  await browser.close();
  await sample.server.close();
}
