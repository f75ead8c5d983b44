import { Testbay } from "@testbay/client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";
import { ManualClock } from "../../clock.ts";
import type { IssuedCredentials } from "../clients/index.ts";
import { SessionDirectory } from "./session-directory.ts";
import { SessionsRepo } from "./sessions.repo.ts";

/**
 * A new WebDriver session through a real server on a port (API.md §12; docs/appium-relay.md steps 1 and 2),
 * with a test agent driven by the SDK's agent API: it claims the session's job and reports it ready or failed,
 * as testbay-agent --appium does once Appium answered.
 */

let server: TestServer;
const clock = new ManualClock();
let ci: IssuedCredentials;
let ciHeaders: Record<string, string>;
let agent: Testbay;
/** The versions' staging dir of the sessions feature put together here (withSessions), if it was. */

const pixel = { serial: "emulator-5554", platform: "android" as const, model: "Pixel 7", os_version: "14" };
const appiumCapabilities = {
  platformName: "Android",
  "appium:automationName": "UiAutomator2",
  "appium:appPackage": "com.android.settings",
};

const basic = (
  credentials: { client_id: string; client_secret: string },
  secret = credentials.client_secret,
) => `Basic ${Buffer.from(`${credentials.client_id}:${secret}`).toString("base64")}`;

const newSession = (
  headers: Record<string, string>,
  alwaysMatch: Record<string, unknown>,
  signal?: AbortSignal,
) =>
  fetch(`${server.origin}/wd/hub/session`, {
    method: "POST",
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
    body: JSON.stringify({ capabilities: { alwaysMatch, firstMatch: [{}] } }),
    signal,
  }).then(async (response) => ({
    status: response.status,
    headers: response.headers,
    // biome-ignore lint/suspicious/noExplicitAny: tests assert on response bodies field by field
    body: (await response.json()) as any,
  }));

/** The test agent's claim of the one appium job it can take (bounded: the claim's own long poll). */
async function claimSessionJob() {
  const job = await agent.agent.claim({
    agent_id: "agent-1",
    devices: [pixel],
    step_types: ["appium"],
    host: false,
    wait_seconds: 10,
  });
  if (!job) throw new Error("no session job within 10 s");
  return job;
}

const execution = async (id: string) =>
  (await call(`${server.baseUrl}/executions/${id}`, { headers: ciHeaders })).body;

beforeAll(async () => {
  server = await startTestServer({ clock, claimPollIntervalMs: 50 });
  ci = await server.createClient("acme", "ci");
  ciHeaders = { "x-api-key": await server.token(ci) };
  const agentCredentials = await server.createClient("acme", "agent");
  agent = new Testbay({
    baseUrl: server.baseUrl,
    clientId: agentCredentials.client_id,
    clientSecret: agentCredentials.client_secret,
  });
});
// The server's clock moves only when told: each test starts with its clients' rate limit buckets full again
// (a burst of 20 refilled at 4 a second), and its executions newer than the earlier tests' (listed newest first).
beforeEach(() => {
  clock.advance(10_000);
});
afterAll(async () => {
  await server?.close();
});

describe("a new session", () => {
  it("is the execution the agent reports ready, answered with Appium's capabilities and Testbay's", async () => {
    const answer = newSession({ authorization: basic(ci) }, appiumCapabilities);
    const job = await claimSessionJob();
    expect(job.plan).toMatchObject({
      name: "Appium session",
      device: { platform: "android" },
      steps: [
        {
          type: "appium",
          capabilities: appiumCapabilities,
          options: { idle_timeout_seconds: 90, max_duration_seconds: 1800, record_video: true },
        },
      ],
    });
    // No app named: nothing to install, and the job says so.
    expect(job).toMatchObject({ package_name: null, version: null, binary_url: null, binary: null });

    const appium = { ...appiumCapabilities, "appium:udid": pixel.serial, "appium:deviceModel": "Pixel 7" };
    expect(await agent.agent.reportSession(job.lease_id, { status: "ready", capabilities: appium })).toEqual({
      state: "ready",
    });
    const { status, body } = await answer;
    expect(status).toBe(200);
    expect(body).toEqual({
      value: {
        sessionId: job.execution_id,
        capabilities: {
          ...appium,
          "testbay:execution_id": job.execution_id,
          "testbay:dashboard_url": `${server.origin}/runs/${job.execution_id}`,
        },
      },
    });

    const view = await execution(job.execution_id);
    expect(view).toMatchObject({
      id: job.execution_id,
      kind: "session",
      // No testbay:options.name given.
      name: "Appium session",
      test_plan_id: null,
      package_name: null,
      version: null,
      status: "running",
      devices: [{ status: "running", agent_id: "agent-1" }],
      client_result: null,
    });
    const list = await call(`${server.baseUrl}/executions`, { headers: ciHeaders });
    expect(list.status).toBe(200);
    expect(list.body.items.find((item: { id: string }) => item.id === job.execution_id)).toMatchObject({
      kind: "session",
      test_plan_id: null,
    });

    // The command routes find it on its agent, for its own client only (or a command without credentials).
    const directory = new SessionDirectory(new SessionsRepo(server.app.services.database.db));
    const onAgent = { organizationId: await orgOf(job.execution_id), agentId: "agent-1" };
    expect(await directory.find(job.execution_id, {})).toEqual(onAgent);
    expect(await directory.find(job.execution_id, { clientId: ci.client_id })).toEqual(onAgent);
    expect(await directory.find(job.execution_id, { clientId: "cl_someone_else" })).toBeUndefined();
    expect(await directory.find("ex_unknown", {})).toBeUndefined();

    // The client's verdict is kept for the session's end.
    const result = await call(`${server.baseUrl}/executions/${job.execution_id}/result`, {
      headers: ciHeaders,
      json: { status: "failed", reason: "the login screen never showed" },
    });
    expect(result.status).toBe(200);
    const stored = await new SessionsRepo(server.app.services.database.db).find(
      await orgOf(job.execution_id),
      job.execution_id,
    );
    expect(stored).toMatchObject({ resultStatus: "failed", resultReason: "the login screen never showed" });
    expect(await execution(job.execution_id)).toMatchObject({
      status: "running",
      client_result: { status: "failed", reason: "the login screen never showed" },
    });

    // Ended by DELETE (passed), the session takes the status its client set.
    expect(await agent.agent.complete(job.lease_id, { status: "passed", reason: "deleted" })).toMatchObject({
      status: "failed",
      requeued: false,
      execution_status: "failed",
    });
    // A directory that has not seen the session running (the one above keeps its route a second: ./session-directory.ts).
    const afresh = new SessionDirectory(new SessionsRepo(server.app.services.database.db));
    expect(await afresh.find(job.execution_id, {})).toEqual({ ended: "deleted" });
    expect(
      await new SessionsRepo(server.app.services.database.db).find(
        await orgOf(job.execution_id),
        job.execution_id,
      ),
    ).toMatchObject({ state: "ended", endReason: "deleted" });
    expect(await execution(job.execution_id)).toMatchObject({ kind: "session", status: "failed" });
  });

  it("fails with the agent's message when Appium could not create it", async () => {
    const answer = newSession(ciHeaders, appiumCapabilities);
    const job = await claimSessionJob();
    const message = "Could not find 'adb' in PATH: set ANDROID_HOME";
    expect(
      await agent.agent.reportSession(job.lease_id, {
        status: "failed",
        error: "session not created",
        message,
      }),
    ).toEqual({ state: "failed" });
    const { status, body } = await answer;
    expect(status).toBe(500);
    expect(body).toEqual({ value: { error: "session not created", message, stacktrace: "" } });
    const directory = new SessionDirectory(new SessionsRepo(server.app.services.database.db));
    expect(await directory.find(job.execution_id, {})).toEqual({
      ended: `the session was never created: ${message}`,
    });
    // A late ready changes nothing: the client was told it failed.
    expect(await agent.agent.reportSession(job.lease_id, { status: "ready", capabilities: {} })).toEqual({
      state: "failed",
    });
    // Its agent hands it back as lost: a session is never queued again.
    expect(
      await agent.agent.complete(job.lease_id, { status: "errored", reason: "device_lost" }),
    ).toMatchObject({
      status: "errored",
      requeued: false,
      execution_status: "errored",
    });
  });

  it("waits out its queue timeout for a device nobody has, then fails naming why; the execution ends errored", async () => {
    const { status, body } = await newSession(ciHeaders, {
      ...appiumCapabilities,
      "testbay:options": { model: "Nokia 3310", queue_timeout_seconds: 0 },
    });
    expect(status).toBe(500);
    expect(body.value.error).toBe("session not created");
    expect(body.value.message).toContain("queue_timeout_seconds (0 s)");
    expect(body.value.message).toContain("no android device matches model Nokia 3310");
    const id = await newestExecutionId();
    expect(await execution(id)).toMatchObject({
      kind: "session",
      status: "errored",
      devices: [{ status: "errored", reason: "queue_timeout" }],
    });
  });

  it("takes appium:platformVersion as the start of the device's OS version, a whole component at a time", async () => {
    const android141 = { ...pixel, serial: "emulator-5556", model: "Pixel 8", os_version: "141" };
    const android14dot1 = { ...pixel, serial: "emulator-5558", model: "Pixel 8", os_version: "14.1" };
    const claim = (devices: (typeof pixel)[], waitSeconds: number) =>
      agent.agent.claim({
        agent_id: "agent-1",
        devices,
        step_types: ["appium"],
        host: false,
        wait_seconds: waitSeconds,
      });
    const answer = newSession(ciHeaders, { ...appiumCapabilities, "appium:platformVersion": "14" });
    const id = await queuedSessionId();

    // 141 is not 14: the session waits, and says for what.
    expect(await claim([android141], 0)).toBeUndefined();
    expect(await execution(id)).toMatchObject({
      status: "queued",
      waiting_reason: {
        code: "no_capable_agent",
        detail: expect.stringContaining("no android device matches OS version 14 or 14.*"),
      },
    });

    // 14.1 is: offered both, the agent gets the session on that one.
    const job = await claim([android141, android14dot1], 10);
    expect(job).toMatchObject({ execution_id: id, device: android14dot1 });
    if (!job) throw new Error("no session job");
    await agent.agent.reportSession(job.lease_id, { status: "ready", capabilities: appiumCapabilities });
    expect((await answer).status).toBe(200);
    await agent.agent.complete(job.lease_id, { status: "passed", reason: "deleted" });

    // "1" is neither 141 nor 14.1: no device of that agent's is a 1.x, and the session fails naming it.
    // (Created a second later than the first, so it is listed first.)
    clock.advance(1_000);
    const timedOut = await newSession(ciHeaders, {
      ...appiumCapabilities,
      "appium:platformVersion": "1",
      "testbay:options": { queue_timeout_seconds: 0 },
    });
    expect(timedOut.status).toBe(500);
    expect(timedOut.body.value.error).toBe("session not created");
    expect(timedOut.body.value.message).toContain("no android device matches OS version 1 or 1.*");
    expect(await execution(await newestExecutionId())).toMatchObject({
      kind: "session",
      status: "errored",
      devices: [{ device: { platform: "android", os_version_prefix: "1" }, reason: "queue_timeout" }],
    });
  });

  it("takes §13's device selectors in testbay:options: waits naming the one nobody meets, then gets the device that does", async () => {
    const older = { ...pixel, serial: "emulator-5560", api_level: 34, labels: { team: "payments" } };
    const newer = { ...pixel, serial: "emulator-5562", api_level: 35, labels: { team: "payments" } };
    const claim = (devices: object[], waitSeconds: number) =>
      agent.agent.claim({
        agent_id: "agent-1",
        devices: devices as (typeof pixel)[],
        step_types: ["appium"],
        host: false,
        wait_seconds: waitSeconds,
      });
    const answer = newSession(ciHeaders, {
      ...appiumCapabilities,
      "testbay:options": { api_level_min: 35, labels: { team: "payments" } },
    });
    const id = await queuedSessionId();

    expect(await claim([older], 0)).toBeUndefined();
    expect(await execution(id)).toMatchObject({
      status: "queued",
      waiting_reason: { code: "no_capable_agent", detail: expect.stringContaining("api_level ≥ 35") },
    });

    const job = await claim([older, newer], 10);
    expect(job).toMatchObject({ execution_id: id, device: { serial: "emulator-5562" } });
    if (!job) throw new Error("no session job");
    await agent.agent.reportSession(job.lease_id, { status: "ready", capabilities: appiumCapabilities });
    expect((await answer).status).toBe(200);
    await agent.agent.complete(job.lease_id, { status: "passed", reason: "deleted" });
  });

  it("names a registered version in testbay:options: its job carries the version's binary to install", async () => {
    await registerBasicApp(server, ciHeaders, "2.0.0");
    const answer = newSession(ciHeaders, {
      ...appiumCapabilities,
      "testbay:options": { app: "com.example.basic", version: "2.0.0", name: "checkout flow" },
    });
    const job = await claimSessionJob();
    expect(job).toMatchObject({
      package_name: "com.example.basic",
      version: "2.0.0",
      binary_url: "/v1/apps/com.example.basic/versions/2.0.0/binary",
      binary: { sha256: expect.any(String) },
    });
    expect(job.plan).toMatchObject({ steps: [{ type: "appium", capabilities: appiumCapabilities }] });
    await agent.agent.reportSession(job.lease_id, { status: "ready", capabilities: appiumCapabilities });
    expect((await answer).status).toBe(200);
    expect(await execution(job.execution_id)).toMatchObject({
      kind: "session",
      name: "checkout flow",
      package_name: "com.example.basic",
      version: "2.0.0",
    });
    await agent.agent.complete(job.lease_id, { status: "passed", reason: "deleted" });

    // An unknown version, or an app of the other platform, fails before anything is queued.
    const unknown = await newSession(ciHeaders, {
      ...appiumCapabilities,
      "testbay:options": { app: "com.example.basic", version: "9.9.9" },
    });
    expect(unknown.status).toBe(500);
    expect(unknown.body.value).toMatchObject({ error: "session not created" });
    expect(unknown.body.value.message).toContain("9.9.9");
    const otherPlatform = await newSession(ciHeaders, {
      platformName: "iOS",
      "testbay:options": { app: "com.example.basic", version: "2.0.0" },
    });
    expect(otherPlatform.status).toBe(400);
    expect(otherPlatform.body.value.message).toContain("android app");
  });

  it("is cancelled when its client goes away while it waits", async () => {
    const gone = new AbortController();
    const answer = newSession(ciHeaders, appiumCapabilities, gone.signal).catch((error: Error) => error);
    const { db } = server.app.services.database;
    const id = await queuedSessionId();
    gone.abort();
    expect(await answer).toBeInstanceOf(Error);
    await waitFor(async () => {
      const row = await db.selectFrom("executions").select("status").where("id", "=", id).executeTakeFirst();
      return row?.status === "cancelled" ? true : undefined;
    });
    expect(await execution(id)).toMatchObject({ kind: "session", status: "cancelled" });
    const stored = await waitFor(async () => {
      const session = await new SessionsRepo(server.app.services.database.db).find(await orgOf(id), id);
      return session?.state === "failed" ? session : undefined;
    });
    expect(stored.message).toBe("the client went away while the session waited");
  });
});

describe("the WebDriver endpoint", () => {
  it("takes HTTP Basic and x-api-key, refuses a wrong secret, no credentials and agents with W3C bodies", async () => {
    const wrong = await newSession({ authorization: basic(ci, "not-the-secret") }, appiumCapabilities);
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toMatch(/^Basic /);
    expect(wrong.body.value).toMatchObject({ error: "invalid argument", stacktrace: "" });
    expect(wrong.body.value.message).toContain("wrong client secret");

    const none = await newSession({}, appiumCapabilities);
    expect(none.status).toBe(401);
    expect(none.body.value.error).toBe("invalid argument");

    const badToken = await newSession({ "x-api-key": "not-a-token" }, appiumCapabilities);
    expect(badToken.status).toBe(401);
    expect(badToken.body.value.error).toBe("invalid argument");

    const agentClient = await server.createClient("acme", "agent");
    const asAgent = await newSession({ authorization: basic(agentClient) }, appiumCapabilities);
    expect(asAgent.status).toBe(403);
    expect(asAgent.body.value.error).toBe("invalid argument");

    // Both ways reach the capabilities: refused there as W3C's invalid argument.
    for (const headers of [{ authorization: basic(ci) }, ciHeaders]) {
      const unprefixed = await newSession(headers, { platformName: "Android", deviceName: "Pixel 7" });
      expect(unprefixed.status).toBe(400);
      expect(unprefixed.body.value.error).toBe("invalid argument");
    }
  });

  it("counts new sessions in the client's rate limit, answering 429 with a W3C body and Retry-After", async () => {
    // A token: HTTP Basic hashes the secret on purpose, which would only slow the test down.
    const pipeline = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<typeof newSession>> | undefined;
    // The clock stands still, so the bucket (a burst of 20) does not refill. Its token call counted too when it
    // shares the limiter of /v1 (API.md §1: a successful token call counts), so the 20th or the 21st is refused.
    for (let i = 0; i < 21 && !limited; i++) {
      const response = await newSession(pipeline, { platformName: "Plan 9" });
      statuses.push(response.status);
      if (response.status === 429) limited = response;
    }
    expect(statuses.length).toBeGreaterThanOrEqual(20);
    expect(statuses.slice(0, -1).every((status) => status === 500)).toBe(true);
    expect(limited?.status).toBe(429);
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(limited?.body.value).toMatchObject({ error: "unknown error", stacktrace: "" });
  });

  it("answers a body that is not JSON with W3C's invalid argument, never a problem document", async () => {
    const response = await fetch(`${server.origin}/wd/hub/session`, {
      method: "POST",
      headers: { "content-type": "application/json", ...ciHeaders },
      body: "{capabilities:",
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await response.json()) as { value: { error: string; message: string } };
    expect(body.value.error).toBe("invalid argument");
    expect(body.value.message).toContain("could not be read");
  });

  it("answers its status without credentials", async () => {
    const status = await call(`${server.origin}/wd/hub/status`);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ value: { ready: true } });
    expect(typeof status.body.value.message).toBe("string");
  });

  it("refuses a result for a test plan's run with 409 not_a_session", async () => {
    await registerBasicApp(server, ciHeaders);
    const plan = await call(`${server.baseUrl}/testplans`, {
      headers: ciHeaders,
      json: {
        name: "plan",
        package_name: "com.example.basic",
        steps: [{ type: "inspect", expect: { debuggable: false } }],
      },
    });
    expect(plan.status).toBe(201);
    const run = await call(`${server.baseUrl}/testplan/run`, {
      headers: ciHeaders,
      json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.2.3" },
    });
    expect(run.status).toBe(200);
    expect(run.body.execution).toMatchObject({ kind: "run" });
    const refused = await call(`${server.baseUrl}/executions/${run.body.execution.id}/result`, {
      headers: ciHeaders,
      json: { status: "passed" },
    });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "not_a_session" });
    expect(refused.body.fix).toContain("session");
  });
});

async function newestExecutionId(): Promise<string> {
  const list = await call(`${server.baseUrl}/executions?limit=1`, { headers: ciHeaders });
  return list.body.items[0].id;
}

async function orgOf(executionId: string): Promise<string> {
  const row = await server.app.services.database.db
    .selectFrom("executions")
    .select("organization_id")
    .where("id", "=", executionId)
    .executeTakeFirstOrThrow();
  return row.organization_id;
}

/**
 * The session execution that waits for a device, once the new session request has queued it. Read from the
 * database: a poll over HTTP would spend the client's rate limit.
 */
function queuedSessionId(): Promise<string> {
  return waitFor(async () => {
    const queued = await server.app.services.database.db
      .selectFrom("executions")
      .select("id")
      .where("kind", "=", "session")
      .where("status", "=", "queued")
      .executeTakeFirst();
    return queued?.id;
  });
}

/** Polls `probe` until it gives a value: at most 2,000 reads, each after the previous answered. */
async function waitFor<T>(probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 2000; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error("the condition did not hold within 2,000 reads");
}
