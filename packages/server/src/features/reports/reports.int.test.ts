// API.md §16, a report to share: GET /executions/{id}/report.html is one self-contained file with the failures
// (message, stack, tries, screenshot) and all tests, safe with whatever the tests printed; opened from disk in
// Chromium it asks for nothing and shows the failures. GET /executions/{id}/ctrf validates against the JSON
// schema CTRF publishes (npm `ctrf`). Another organization's execution is a 404 for both.
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../../../web/test/browser.ts";
import { claimNext } from "../../../test/agent-attempt.ts";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";
import type { IssuedCredentials } from "../clients/index.ts";

// The agent's stand-in for `adb exec-out screencap -p` (untyped JavaScript): the screen a failed test left.
const screencap = new URL("../../../../agent/test/stand-ins/screencap.mjs", import.meta.url).href;
const { appScreen } = (await import(screencap)) as {
  appScreen: (width: number, height: number, screen: Record<string, string>) => Buffer;
};

let server: TestServer;
let ci: Record<string, string>;
let ciClient: IssuedCredentials;
let otherCi: Record<string, string>;
let executionId: string;

const hostile = `<script>alert("pwned")</script><img src="http://127.0.0.1:1/beacon.png">`;
const wrongPassword = "Expected 'Welcome' but the screen says 'Wrong password'";

const event = (seq: number, name: string, status: string, extra: Record<string, unknown> = {}) => ({
  seq,
  type: "test_case",
  step_index: 0,
  classname: "com.example.basic.LoginTest",
  name,
  status,
  duration_ms: 1200 + seq * 10,
  message: null,
  details: null,
  ...extra,
});

beforeAll(async () => {
  server = await startTestServer();
  const agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  // A named client, as a pipeline's is: the report names it as the dashboard does.
  ciClient = await server.app.services.clients.createClient(
    "acme",
    "ci",
    undefined,
    "GitHub Actions: acme/app",
  );
  ci = { "x-api-key": await server.token(ciClient) };
  otherCi = { "x-api-key": await server.token(await server.createClient("globex", "ci")) };
  await registerBasicApp(server, ci);
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: "login smoke",
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      steps: [{ type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"] }],
    },
  });
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: {
      test_plan_id: plan.body.id,
      package_name: "com.example.basic",
      version: "1.2.3",
      ci: {
        provider: "github",
        branch: "feature/login",
        commit: "4f2a9c1",
        pull_request: "42",
        build_url: "https://ci.example.com/build/7",
      },
    },
  });
  expect(run.status).toBe(200);
  executionId = run.body.execution.id;
  const lease = await claimNext(server, agent);
  const screenshot = appScreen(1080, 2400, {
    app: "com.example.basic",
    class: "com.example.basic.LoginTest",
    method: "signInWithWrongPassword",
    state: "failed",
    message: wrongPassword,
  });
  const put = await fetch(
    `${server.baseUrl}/agent/jobs/${lease}/artifacts/screenshots/signInWithWrongPassword.png`,
    { method: "PUT", headers: { ...agent, "content-type": "image/png" }, body: screenshot },
  );
  expect(put.status).toBe(201);
  const events = [
    event(1, "opensLoginScreen", "passed"),
    event(2, "signInWithWrongPassword", "failed", {
      message: wrongPassword,
      details: `java.lang.AssertionError: ${wrongPassword}\n\tat com.example.basic.LoginTest.signInWithWrongPassword(LoginTest.java:42)\n\tat java.lang.reflect.Method.invoke(Native Method)`,
      artifacts: ["screenshots/signInWithWrongPassword.png"],
    }),
    event(3, hostile, "errored", {
      message: `${hostile} </pre></details></article>`,
      details: `java.lang.IllegalStateException: ${hostile}`,
    }),
    event(4, "rememberMe", "failed", { retry: 0, message: "timed out waiting for the checkbox" }),
    event(5, "rememberMe", "passed", { retry: 1 }),
    event(6, "forgotPasswordLink", "skipped"),
  ];
  const sent = await call(`${server.baseUrl}/agent/jobs/${lease}/events`, {
    headers: agent,
    json: { events },
  });
  expect(sent.status).toBe(200);
  const done = await call(`${server.baseUrl}/agent/jobs/${lease}/complete`, {
    headers: agent,
    json: { status: "failed" },
  });
  expect(done.status).toBe(200);
});
afterAll(() => server.close());

const reportOf = (id: string, headers = ci) =>
  fetch(`${server.baseUrl}/executions/${id}/report.html`, { headers });

describe("GET /v1/executions/{id}/report.html", () => {
  it("is one HTML file with the summary, the failures and every test, served under a strict CSP", async () => {
    const response = await reportOf(executionId);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(csp).toMatch(/^default-src 'none'/);
    expect(csp).toContain("img-src data:");
    expect(csp).toContain("sandbox allow-scripts");
    expect(csp).not.toContain("unsafe-inline");
    const page = await response.text();
    // The summary: plan, app, version, status and the CI metadata.
    for (const text of ["login smoke", "com.example.basic", "1.2.3", "feature/login", "4f2a9c1", "Pixel 7"]) {
      expect(page).toContain(text);
    }
    expect(page).toContain(`GitHub Actions: acme/app (${ciClient.client_id})`);
    expect(page).toContain('<a href="https://ci.example.com/build/7" rel="noopener noreferrer">');
    // Each failure with its message (escaped) and stack; the flaky test's tries; every test in the table.
    expect(page).toContain("Failures (2)");
    expect(page).toContain("Expected &#39;Welcome&#39; but the screen says &#39;Wrong password&#39;");
    expect(page).toContain("at com.example.basic.LoginTest.signInWithWrongPassword(LoginTest.java:42)");
    expect(page).toContain('All tests (<span id="shown-count">5</span>)');
    for (const name of ["opensLoginScreen", "rememberMe", "forgotPasswordLink"]) expect(page).toContain(name);
    // Each failure's group (API.md §16), from the signature stored with the failed test case.
    expect(page).toContain("Failure groups (2)");
    // Its title as GET /v1/failures gives it: quoted values as placeholders.
    expect(page).toContain("group: AssertionError: Expected &#39;…&#39; but the screen says &#39;…&#39;");
    // The screenshot as an inline thumbnail.
    expect(page).toMatch(/<img src="data:image\/png;base64,[A-Za-z0-9+/=]+" width="180" height="400"/);
  });

  it("is self-contained and runs no script but its own, whatever the tests printed", async () => {
    const page = await (await reportOf(executionId)).text();
    expect(page.match(/<script/g)).toHaveLength(1);
    expect(page).not.toContain('<img src="http');
    expect(page).toContain("&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;");
    // Nothing refers to another file: every src is a data: URI, no <link>, no url() in the style.
    for (const [, src] of page.matchAll(/\ssrc="([^"]*)"/g)) expect(src).toMatch(/^data:image\//);
    expect(page).not.toMatch(/<link|url\(|@import/);
  });

  it("is a 404 for another organization's execution, and for one that does not exist", async () => {
    const other = await reportOf(executionId, otherCi);
    expect(other.status).toBe(404);
    expect(((await other.json()) as { code: string }).code).toBe("execution_not_found");
    expect((await reportOf("ex_doesnotexist")).status).toBe(404);
  });

  it("opened from disk in Chromium, asks for nothing, shows the failures and its table filters", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "testbay-report-"));
    const file = path.join(dir, "report.html");
    await writeFile(file, Buffer.from(await (await reportOf(executionId)).arrayBuffer()));
    const fileUrl = pathToFileURL(file).href;
    const browser = await launchChromium();
    try {
      for (const look of [
        { name: "light", colorScheme: "light" as const, viewport: { width: 1280, height: 900 } },
        { name: "dark", colorScheme: "dark" as const, viewport: { width: 1280, height: 900 } },
        { name: "phone", colorScheme: "light" as const, viewport: { width: 390, height: 844 } },
      ]) {
        const context = await browser.newContext({ colorScheme: look.colorScheme, viewport: look.viewport });
        const requested: string[] = [];
        const problems: string[] = [];
        context.on("request", (request) => requested.push(request.url()));
        // Anything but the file itself is refused (and recorded above).
        await context.route(
          (url) => url.protocol !== "file:",
          (route) => route.abort(),
        );
        const page = await context.newPage();
        page.on("console", (message) => {
          if (message.type() === "error") problems.push(message.text());
        });
        page.on("pageerror", (error) => problems.push(error.message));
        await page.goto(fileUrl);
        await expect.poll(() => page.locator("#failures h3").first().isVisible()).toBe(true);
        expect(
          await page.locator("article.failure h3", { hasText: "signInWithWrongPassword" }).isVisible(),
        ).toBe(true);
        expect(await page.getByText(wrongPassword).first().isVisible()).toBe(true);
        // The thumbnail decodes: Chromium reads the PNG the server wrote.
        const thumbnail = page.locator("figure.shot img");
        expect(
          await thumbnail.evaluate((element) => {
            // No DOM types in the server's tsconfig: the image element as far as this reads it.
            const image = element as unknown as { complete: boolean; naturalWidth: number };
            return image.complete && image.naturalWidth;
          }),
        ).toBe(180);
        // The script ran (its hash is in the page's CSP): the Failed filter leaves the failed tests.
        await page.locator('[data-status-filter="failed"]').click();
        await expect.poll(() => page.locator("#shown-count").textContent()).toBe("1");
        await page.locator('[data-status-filter="all"]').click();
        await page.screenshot({
          path: look.name === "light" ? "/tmp/report-shot.png" : `/tmp/report-shot-${look.name}.png`,
          fullPage: true,
        });
        expect(requested.filter((url) => url !== fileUrl)).toEqual([]);
        expect(problems).toEqual([]);
        await context.close();
      }
    } finally {
      await browser.close();
    }
  });
});

describe("GET /v1/executions/{id}/ctrf", () => {
  it("validates against CTRF's published JSON schema and carries the failures, tries and screenshot", async () => {
    // The package exports only its code: its published schema sits beside it, in src/.
    const entry = createRequire(import.meta.url).resolve("ctrf");
    const schemaFile = path.join(path.dirname(entry), "..", "src", "ctrf-schema-0.0.json");
    const schema = JSON.parse(await readFile(schemaFile, "utf8"));
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const validate = ajv.compile(schema);
    const { status, body } = await call(`${server.baseUrl}/executions/${executionId}/ctrf`, { headers: ci });
    expect(status).toBe(200);
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
    expect(body.runId).toBe(executionId);
    expect(body.results.summary).toMatchObject({ tests: 5, passed: 2, failed: 2, skipped: 1, flaky: 1 });
    expect(body.results.environment).toMatchObject({
      appName: "com.example.basic",
      appVersion: "1.2.3",
      branchName: "feature/login",
      commit: "4f2a9c1",
      buildUrl: "https://ci.example.com/build/7",
    });
    const failed = body.results.tests.find((t: { name: string }) => t.name === "signInWithWrongPassword");
    expect(failed).toMatchObject({
      status: "failed",
      message: wrongPassword,
      device: "Pixel 7, android 14 (emulator-5554)",
      attachments: [
        {
          name: "screenshots/signInWithWrongPassword.png",
          contentType: "image/png",
          path: `/v1/executions/${executionId}/artifacts/screenshots/signInWithWrongPassword.png?device=0&shard=0&attempt=1`,
        },
      ],
    });
    expect(failed.trace).toContain("LoginTest.java:42");
    const errored = body.results.tests.find((t: { rawStatus?: string }) => t.rawStatus === "errored");
    expect(errored).toMatchObject({ status: "failed", name: hostile });
    const flaky = body.results.tests.find((t: { name: string }) => t.name === "rememberMe");
    expect(flaky).toMatchObject({
      status: "passed",
      flaky: true,
      retries: 1,
      retryAttempts: [{ attempt: 1, status: "failed", message: "timed out waiting for the checkbox" }],
    });
  });

  it("is a 404 for another organization's execution", async () => {
    const { status, body } = await call(`${server.baseUrl}/executions/${executionId}/ctrf`, {
      headers: otherCi,
    });
    expect(status).toBe(404);
    expect(body.code).toBe("execution_not_found");
  });
});
