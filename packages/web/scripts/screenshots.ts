// Screenshots of every dashboard page, light and dark, at a desktop (1440×900) and a phone (390×844) size, written
// to docs/screenshots/ for people to look at (and for docs/dashboard-and-people.md). Starts a server with sample
// runs, then opens the built dashboard in Debian's chromium:
//   npm run build && npm run screenshots -w packages/web
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { ManualClock } from "../../server/src/clock.ts";
import { TestReceiver } from "../../server/src/features/webhooks/test-receiver.ts";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "../test/browser.ts";
import { seedDeviceFilesRun } from "../test/device-files-sample.ts";
import {
  ciHeaders,
  createMember,
  organization,
  type Person,
  seedDeviceRun,
  seedInspectRuns,
} from "../test/sample-data.ts";
import { seedDevicePools } from "../test/sample-device-pools.ts";
import {
  runSampleSession,
  sessionDeviceError,
  sessionName,
  startSessionLab,
} from "../test/sample-session.ts";
import { flakyTest, seedShardedRun, shardedPlanName } from "../test/sharded-sample.ts";
import { requireWebBuild } from "../test/web-build.ts";
import { recordSampleCaptures } from "./sample-recording.ts";

// TESTBAY_SCREENSHOTS_DIR writes them elsewhere (to look at a page without changing the committed pictures).
const outDir =
  process.env.TESTBAY_SCREENSHOTS_DIR ??
  fileURLToPath(new URL("../../../docs/screenshots/", import.meta.url));

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
  shardedRun: string;
  deviceFilesRun: string;
  session: string;
}

async function seed(): Promise<Sample> {
  // The server's clock starts 40 minutes ago and moves as the sample runs do (about as much), so times and
  // durations look real and the live run started a moment ago.
  const clock = new ManualClock(Date.now() - 40 * 60 * 1000);
  // Private addresses allowed: the settings' webhooks post to a receiver on 127.0.0.1, as on-premises ones do.
  const server = await startTestServer({
    clock,
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_WEBHOOK_ALLOW_PRIVATE: "true" },
  });
  // The pipeline's client has a name: the runs' pages say who triggered them by it.
  const ci = await ciHeaders(server, "GitHub Actions: acme/app");
  const person = await createMember(server);
  await seedInspectRuns(server, ci);
  clock.advance(15 * 60 * 1000);
  // The failed run's failures carry a screenshot, the video they are in and their logcat, as an agent's do: made
  // in a browser of their own (a canvas drawn and recorded), before the pages are shot.
  const recorder = await launchChromium();
  const captures = await recordSampleCaptures(recorder).finally(() => recorder.close());
  const failedRun = await seedDeviceRun(server, ci, { finish: true, branch: "main", captures });
  clock.advance(5 * 60 * 1000);
  const shardedRun = await seedShardedRun(server, ci, { branch: "main" });
  // A run whose plan pulls Allure results and screenshots off the device and asks for coverage (API.md §14).
  clock.advance(2 * 60 * 1000);
  const deviceFilesRun = await seedDeviceFilesRun(server, ci, { branch: "main" });
  // An Appium session a team's suite ran through /wd/hub (before the live run, whose lease must not lapse while it
  // runs): a real agent with Appium's fake driver on a stand-in device, stopped once the session's files are in.
  clock.advance(5 * 60 * 1000);
  const lab = await startSessionLab(server);
  let session: string;
  try {
    const credentials = await server.app.services.clients.createClient(
      organization,
      "ci",
      undefined,
      "GitHub Actions: acme/app-e2e",
    );
    session = (await runSampleSession(server, lab, credentials)).id;
    await waitUntilEnded(server, ci, session);
  } finally {
    await lab.close();
  }
  clock.advance(10 * 60 * 1000);
  const liveRun = await seedDeviceRun(server, ci, {
    finish: false,
    branch: "feature/checkout-v2",
    version: "1.3.0",
  });
  // The newest build came without its test APK: the instrumentation plans' trigger starts on 1.3.0, which has one.
  // A second later (versions list newest first), well within the live run's lease (60 s), which must not lapse.
  clock.advance(1000);
  await registerBasicApp(server, ci, "1.4.0");
  // Agents with device pools (managed emulators and simulators in their states) for the agents page.
  await seedDevicePools(server);
  // A nightly schedule on the failed run's plan: its page shows it beside the trend charts.
  const { body: failed } = await call(`${server.baseUrl}/executions/${failedRun}`, { headers: ci });
  const scheduled = await call(`${server.baseUrl}/testplans/${failed.test_plan_id}/schedules`, {
    headers: ci,
    json: { cron: "0 2 * * 1-5", version: "latest:branch=main" },
  });
  if (scheduled.status !== 201) throw new Error(`schedule: ${JSON.stringify(scheduled.body)}`);
  return { server, person, failedRun, liveRun, shardedRun, deviceFilesRun, session };
}

async function waitUntilEnded(server: TestServer, ci: Record<string, string>, id: string): Promise<void> {
  const until = Date.now() + 60_000;
  for (;;) {
    const { body } = await call(`${server.baseUrl}/executions/${id}`, { headers: ci });
    if (!["queued", "running"].includes(body.status)) return;
    if (Date.now() > until) throw new Error(`session ${id} did not end`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function signIn(page: Page, origin: string, person: Person): Promise<void> {
  await page.goto(`${origin}/sign-in`);
  await page.getByLabel("Email").fill(person.email);
  await page.getByLabel("Password").fill(person.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${origin}/runs`);
}

/** The whole page, or (`fullPage: false`) what the window shows: a modal dialog sits in the window, not the page. */
async function shoot(page: Page, name: string, { fullPage = true } = {}): Promise<void> {
  const file = path.join(outDir, `${name}.png`);
  // The pointer rests in a corner: a row it last clicked would show as hovered.
  await page.mouse.move(0, 0);
  await page.screenshot({ path: file, fullPage });
  process.stderr.write(`screenshots: ${path.relative(process.cwd(), file)}\n`);
}

/** Runs `shots` once per theme and window size, in a fresh browser context each time; `suffix` names the view. */
async function eachView(
  browser: Browser,
  shots: (page: Page, suffix: string) => Promise<void>,
): Promise<void> {
  for (const theme of themes) {
    for (const size of sizes) {
      const context = await browser.newContext({
        viewport: { width: size.width, height: size.height },
        colorScheme: theme,
        deviceScaleFactor: 1,
      });
      try {
        await shots(await context.newPage(), `${theme}-${size.width}x${size.height}`);
      } finally {
        await context.close();
      }
    }
  }
}

async function pages(browser: Browser, sample: Sample): Promise<void> {
  const { origin } = sample.server;
  await eachView(browser, async (page, suffix) => {
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
    // Each failure's evidence loads as it comes into view: pass over all of them, then wait for the pictures
    // and the videos' frames at their failures.
    const failures = page
      .getByRole("region", { name: /^Failed tests/ })
      .getByRole("listitem")
      .filter({ hasText: "Stack trace" });
    for (const failure of await failures.all()) {
      await failure.scrollIntoViewIfNeeded();
      await failure.getByText(/^Fails at /).waitFor();
    }
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.waitForFunction(() => {
      const images = [...document.querySelectorAll<HTMLImageElement>("main li img")];
      const videos = [...document.querySelectorAll<HTMLVideoElement>("main li video")];
      return (
        images.length >= 2 &&
        images.every((image) => image.complete && image.naturalWidth > 0) &&
        videos.length === 2 &&
        videos.every(
          // The frame at the failure is shown and what follows it is in (no loading spinner over it).
          (video) => video.readyState >= video.HAVE_FUTURE_DATA && !video.seeking,
        )
      );
    });
    // The player's loading spinner fades out for a moment after the data is in.
    await page.waitForTimeout(1_000);
    // The log comes in its own request: a full-page shot taken before it lands is cut short.
    await page.getByText("Tests run: 60").last().waitFor();
    // Each failure's history (GET /v1/tests): the sample plan ran once, so its failures are new.
    await page.getByText("New: first run of this test").first().waitFor();
    await shoot(page, `run-failed-${suffix}`);

    // A run split into shards, failed tests rerun: the shards under their device, the flaky test's tries open.
    await page.goto(`${origin}/runs/${sample.shardedRun}`);
    await page.getByRole("heading", { name: /Passed on retry \(1\)/ }).waitFor();
    await page.getByText("Tries (2): failed, then passed").click();
    await page.getByRole("region", { name: `Logcat of ${flakyTest.name}, try 1` }).waitFor();
    await page.waitForFunction(() =>
      [...document.querySelectorAll<HTMLImageElement>("main li img")].every(
        (image) => image.complete && image.naturalWidth > 0,
      ),
    );
    await page.getByRole("heading", { name: "All tests (24)" }).waitFor();
    // The log comes in its own request: a full-page shot taken before it lands is cut short.
    await page.getByText("Shard 3 of 3: 8 tests run").waitFor();
    await shoot(page, `run-sharded-${suffix}`);

    // The files the plan pulled off the devices and the coverage files, shard by shard, apart from the captures.
    await page.goto(`${origin}/runs/${sample.deviceFilesRun}`);
    await page.getByRole("heading", { name: /^Files pulled from the device/ }).waitFor();
    await page.getByRole("heading", { name: /^Coverage/ }).waitFor();
    await page.getByRole("heading", { name: "Artifacts (1)" }).waitFor();
    await page.getByText("adb -s R5CT70XYZ5E pull /sdcard/allure-results").waitFor();
    await shoot(page, `run-device-files-${suffix}`);

    await page.goto(`${origin}/runs/${sample.liveRun}`);
    await page.getByRole("heading", { name: /All tests \(\d+\)/ }).waitFor();
    await page.getByText("Tests run: 24").waitFor();
    await shoot(page, `run-live-${suffix}`);
    // Cancelling cannot be undone: the run asks first.
    await page.getByRole("button", { name: "Cancel run" }).click();
    await page.getByRole("dialog", { name: "Cancel this run?" }).waitFor();
    await page.evaluate(() => window.scrollTo(0, 0));
    await shoot(page, `run-cancel-confirm-${suffix}`, { fullPage: false });
    await page.getByRole("button", { name: "Keep running" }).click();

    // An Appium session: its commands beside its video and device log, the failed command's moment shown.
    await page.goto(`${origin}/runs/${sample.session}`);
    await page.getByRole("heading", { level: 1, name: sessionName }).waitFor();
    await page
      .getByRole("region", { name: "Device log", exact: true })
      .getByText(sessionDeviceError)
      .waitFor();
    await page.getByText("Marked failed by the client", { exact: false }).waitFor();
    await page
      .getByRole("listitem")
      .filter({ hasText: "404 failed" })
      .getByRole("button", { name: /show in the video/ })
      .click();
    await page.waitForFunction(() => {
      const video = document.querySelector<HTMLVideoElement>("main video");
      return !!video && video.readyState >= video.HAVE_FUTURE_DATA && !video.seeking && video.currentTime > 0;
    });
    // The log comes in its own request: a full-page shot taken before it lands is cut short.
    await page.getByText("appium session ended: deleted").waitFor();
    // The player's loading spinner fades out for a moment after the data is in.
    await page.waitForTimeout(1_000);
    await shoot(page, `session-${suffix}`);

    await page.goto(`${origin}/plans`);
    // A table from 640 px, cards on a phone: wait for whichever shows.
    await page.getByRole("link", { name: "Release gate: target SDK" }).waitFor();
    await shoot(page, `plans-${suffix}`);

    await page.getByRole("link", { name: "Checkout: instrumentation (main)" }).click();
    await page.getByRole("heading", { name: "Checkout: instrumentation (main)" }).waitFor();
    await page.getByRole("button", { name: "Trigger", exact: true }).waitFor();
    await page.getByRole("option", { name: /1\.4\.0/ }).waitFor({ state: "attached" });
    await page.getByText("0 2 * * 1-5", { exact: true }).first().waitFor();
    await page.getByRole("region", { name: "Trends (30 days)" }).locator("canvas").first().waitFor();
    await shoot(page, `plan-${suffix}`);

    // A plan whose step is split into shards and retries its failed tests: its summary says so.
    await page.goto(`${origin}/plans`);
    await page.getByRole("link", { name: shardedPlanName }).click();
    // The list says it too: wait for the plan's page, or the list still showing matches as well.
    await page.getByRole("heading", { name: shardedPlanName }).waitFor();
    await page.getByText("3 shards by count, failed tests retried up to 2 times").waitFor();
    await page.getByRole("option", { name: /1\.4\.0/ }).waitFor({ state: "attached" });
    await shoot(page, `plan-sharded-${suffix}`);
    await page.goto(`${origin}/plans`);
    await page.getByRole("link", { name: "Checkout: instrumentation (main)" }).click();
    await page.getByRole("heading", { name: "Checkout: instrumentation (main)" }).waitFor();

    // The same plan in its form: each step's fields filled in as saved.
    await page.getByRole("link", { name: "Edit" }).click();
    await page.getByRole("group", { name: /^Step 1: / }).waitFor();
    await shoot(page, `plan-edit-${suffix}`);

    // The form as a person sees it after the API refused it: the messages at their fields, a step's at that
    // step's own input (which has the focus).
    await page.goto(`${origin}/plans/new`);
    // A plan without a name is stopped before it is sent, with the words the form uses for it.
    await page.getByRole("button", { name: "Create plan" }).click();
    await page.getByText("Give the plan a name").waitFor();
    await shoot(page, `plan-form-name-${suffix}`, { fullPage: false });
    await page.getByLabel("Name", { exact: true }).fill("Nightly regression");
    await page.getByRole("button", { name: "Add a device" }).click();
    await page.getByLabel("Device 1 model").fill("Pixel 8");
    await page.getByRole("group", { name: "Step 1: inspect" }).getByLabel("Min SDK at most").fill("0");
    await page.getByLabel("Type of the new step").selectOption("instrumentation");
    await page.getByRole("button", { name: "Add step" }).click();
    const instrumentation = page.getByRole("group", { name: "Step 2: instrumentation" });
    // Filter and device options are folded while at their defaults.
    await instrumentation.locator("summary", { hasText: "Which tests run" }).click();
    await instrumentation.locator("summary", { hasText: "Device options" }).click();
    await instrumentation.getByLabel("Classes").fill("com.example.shop.CheckoutTest");
    await instrumentation.getByLabel("Record video").selectOption("always");
    await instrumentation.locator("summary", { hasText: "Shards and retries" }).click();
    await instrumentation.getByLabel("Shards", { exact: true }).fill("60");
    await instrumentation.getByLabel("Retry failed tests").fill("2");
    await page.getByLabel("Timeout (seconds)", { exact: true }).fill("5");
    await page.getByRole("button", { name: "Create plan" }).click();
    await page.getByText("see the messages at the fields below").waitFor();
    await shoot(page, `plan-form-error-${suffix}`);

    await page.goto(`${origin}/agents`);
    await page.getByRole("heading", { name: "lab-mac-mini" }).waitFor();
    await shoot(page, `agents-${suffix}`);

    // The failure groups across runs, the first one opened on its example and occurrences.
    await page.goto(`${origin}/failures`);
    const group = page
      .getByRole("listitem")
      .filter({ has: page.getByText("Occurrences") })
      .first();
    await group.getByRole("link").first().click();
    await page.waitForURL(/group=/);
    await group.getByRole("heading", { name: "Example" }).waitFor();
    await shoot(page, `failures-${suffix}`);

    // The sharded plan's flaky test (it failed once and passed on its rerun).
    await page.goto(`${origin}/plans`);
    await page.getByRole("link", { name: shardedPlanName }).click();
    await page.getByRole("heading", { name: shardedPlanName }).waitFor();
    const planId = new URL(page.url()).pathname.split("/").pop();
    await page.goto(`${origin}/flaky?plan=${planId}`);
    await page.getByRole("listitem", { name: flakyTest.name }).waitFor();
    await shoot(page, `flaky-${suffix}`);
  });
}

/**
 * Webhooks for the settings' shots: a deploy gate on a receiver that refused the first test (HTTP 500, its retry
 * waiting on the server's clock) and took the second, and a Slack channel someone turned off. Returns the receiver,
 * for closing once the shots are taken.
 */
const slackUrl = "https://hooks.slack.com/services/T0000000/B0000000/XXXXXXXXXXXXXXXXXXXXXXXX";

async function seedWebhooks(server: TestServer): Promise<TestReceiver> {
  const ci = await ciHeaders(server);
  const receiver = await TestReceiver.start();
  const create = async (json: Record<string, unknown>) => {
    const created = await call(`${server.baseUrl}/webhooks`, { headers: ci, json });
    if (created.status !== 201) throw new Error(`webhook not created: ${JSON.stringify(created.body)}`);
    return created.body as { id: string; secret?: string };
  };
  const slack = await create({
    url: slackUrl,
    events: ["execution.finished", "test.flaky_detected"],
    format: "slack",
    description: "#mobile-releases",
  });
  await call(`${server.baseUrl}/webhooks/${slack.id}`, {
    method: "PATCH",
    headers: ci,
    json: { enabled: false },
  });
  const gate = await create({
    url: receiver.url,
    events: ["execution.started", "execution.finished"],
    description: "Deploy gate",
  });
  receiver.secret = gate.secret;
  receiver.answers.push({ status: 500, body: "deploy gate restarting" });
  const deliveries = async () => {
    const log = await call(`${server.baseUrl}/webhooks/${gate.id}/deliveries`, { headers: ci });
    return log.body.items as Array<{ attempts: unknown[] }>;
  };
  for (const count of [1, 2]) {
    // A second apart, so the log's "newest first" has an order (the retry waits 5 s: it stays waiting).
    server.clock.advance(1000);
    await call(`${server.baseUrl}/webhooks/${gate.id}/test`, { method: "POST", headers: ci });
    await receiver.requests(count);
    // The sender records the attempt just after the receiver answers.
    while ((await deliveries())[0]?.attempts.length !== 1) await new Promise((r) => setTimeout(r, 50));
  }
  return receiver;
}

/**
 * A status page whose receiver refuses every message (503, under maintenance): two tests refused, their retries
 * waiting on the server's clock, so the list shows it failing with its last error. Returns the receiver.
 */
async function seedFailingWebhook(server: TestServer): Promise<TestReceiver> {
  const ci = await ciHeaders(server);
  const receiver = await TestReceiver.start();
  for (let n = 0; n < 4; n++) receiver.answers.push({ status: 503, body: "status page under maintenance" });
  const created = await call(`${server.baseUrl}/webhooks`, {
    headers: ci,
    json: { url: receiver.url, events: ["execution.finished"], description: "Status page" },
  });
  if (created.status !== 201) throw new Error(`webhook not created: ${JSON.stringify(created.body)}`);
  const id = created.body.id as string;
  const deliveries = async () => {
    const log = await call(`${server.baseUrl}/webhooks/${id}/deliveries`, { headers: ci });
    return log.body.items as Array<{ attempts: unknown[] }>;
  };
  for (const count of [1, 2]) {
    await call(`${server.baseUrl}/webhooks/${id}/test`, { method: "POST", headers: ci });
    await receiver.requests(count);
    // The sender records the attempt just after the receiver answers.
    while ((await deliveries())[0]?.attempts.length !== 1) await new Promise((r) => setTimeout(r, 50));
  }
  return receiver;
}

/**
 * Settings, as an admin sees it: the clients, people and webhooks (a webhook's delivery log open, on the request
 * a delivered message sent), a webhook's edit form, then a new client's secret as it is shown once. Each size and theme creates one client through the page, so later shots
 * list a few more clients than earlier ones.
 */
async function settingsPages(browser: Browser, sample: Sample): Promise<void> {
  const { origin } = sample.server;
  const people = sample.server.app.services.people;
  const account = await people.createUser({ email: "alex@example.com", role: "admin", org: organization });
  const admin = { email: account.email, password: account.password };
  await people.createUser({ email: "vic@example.com", role: "viewer", org: organization });
  const clients = sample.server.app.services.clients;
  await clients.createClient(organization, "agent");
  await clients.disableClient((await clients.createClient(organization, "ci")).client_id);
  const receiver = await seedWebhooks(sample.server);
  const failing = await seedFailingWebhook(sample.server);
  await eachView(browser, async (page, suffix) => {
    await signIn(page, origin, admin);
    await page.goto(`${origin}/settings`);
    await page.getByRole("combobox", { name: `Role of ${admin.email}` }).waitFor();
    await page
      .getByRole("button", { name: /^Rotate the secret of/ })
      .first()
      .waitFor();
    await page.getByRole("listitem", { name: receiver.url, exact: true }).waitFor();
    await page
      .getByRole("listitem", { name: failing.url, exact: true })
      .getByText(/^The last 2 deliveries failed/)
      .waitFor();
    await shoot(page, `settings-${suffix}`);

    const webhooks = page.getByRole("region", { name: "Webhooks", exact: true });
    await webhooks.getByRole("button", { name: `Deliveries of ${receiver.url}` }).click();
    // A table from 640 px, cards on a phone: wait for whichever shows.
    await webhooks.getByText("delivered after 1 attempt").filter({ visible: true }).waitFor();
    // The message the receiver refused (HTTP 500), its retry waiting: what people open the request to look into.
    const refused = String(receiver.received[0]?.headers["webhook-id"]);
    await webhooks
      .getByRole("button", { name: `Show request of ${refused}` })
      .filter({ visible: true })
      .click();
    await webhooks
      .getByRole("table", { name: "Headers sent in attempt 1 of 1" })
      .filter({ visible: true })
      .waitFor();
    await webhooks.scrollIntoViewIfNeeded();
    await shoot(page, `settings-webhooks-${suffix}`);
    await webhooks
      .getByRole("button", { name: /^Hide request of/ })
      .filter({ visible: true })
      .click();

    await webhooks.getByRole("button", { name: `Edit the webhook to ${slackUrl}` }).click();
    const editForm = webhooks.getByRole("form", { name: `Edit the webhook to ${slackUrl}` });
    await editForm.scrollIntoViewIfNeeded();
    await shoot(page, `settings-webhook-edit-${suffix}`, { fullPage: false });
    await editForm.getByRole("button", { name: "Cancel" }).click();

    await page.getByRole("button", { name: "Create client" }).click();
    await page.getByRole("region", { name: /created: copy its secret now/ }).waitFor();
    await shoot(page, `settings-client-secret-${suffix}`);
  }).finally(() => Promise.all([receiver.close(), failing.close()]));
}

const appBundle = new URL("../../server/test/fixtures/binaries/app-bundle.aab", import.meta.url);

/**
 * Apps: the list (the sample app with its builds, an app bundle, an iOS app without a build yet), then the sample
 * app's page with its two versions, their test packages and runs. Run last: the apps it adds show on no other page.
 */
async function appsPages(browser: Browser, sample: Sample): Promise<void> {
  const { origin, baseUrl } = sample.server;
  const ci = await ciHeaders(sample.server);
  const register = async (json: Record<string, string>) => {
    const created = await call(`${baseUrl}/apps`, { headers: ci, json });
    if (created.status !== 201) throw new Error(`app not created: ${JSON.stringify(created.body)}`);
  };
  await register({ package_name: "com.example.bundle", platform: "android", display_name: "Bundle" });
  const upload = await fetch(`${baseUrl}/apps/com.example.bundle/versions/4.5.6`, {
    method: "PUT",
    headers: ci,
    body: await readFile(appBundle),
  });
  if (upload.status !== 201) throw new Error(`bundle not uploaded: ${await upload.text()}`);
  await register({ package_name: "com.example.shop", platform: "ios", display_name: "Shop" });
  await eachView(browser, async (page, suffix) => {
    await signIn(page, origin, sample.person);
    await page.goto(`${origin}/apps`);
    // A table from 640 px, cards on a phone: wait for whichever shows.
    await page.getByRole("link", { name: "Shop", exact: true }).waitFor();
    await shoot(page, `apps-${suffix}`);

    await page.getByRole("link", { name: "com.example.basic", exact: true }).click();
    await page.getByRole("heading", { name: "1.2.3", exact: true }).waitFor();
    // Each version's runs come with the app's newest runs, in their own request.
    for (const version of ["1.3.0", "1.2.3"]) {
      const card = page.getByRole("article").filter({ has: page.getByRole("heading", { name: version }) });
      await card.getByRole("region", { name: "Runs" }).getByRole("listitem").first().waitFor();
    }
    await shoot(page, `app-${suffix}`);
  });
}

requireWebBuild();
await mkdir(outDir, { recursive: true });
const sample = await seed();
const browser = await launchChromium();
try {
  await pages(browser, sample);
  await settingsPages(browser, sample);
  await appsPages(browser, sample);
} finally {
  await browser.close();
  await sample.server.close();
}
