import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";

let server: TestServer;

const inspect = { type: "inspect", expect: { debuggable: false } };
const shell = { type: "shell", run: "echo hello" };
const pixel7 = { serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" };
const pixel6 = { serial: "emulator-5556", platform: "android", model: "Pixel 6", os_version: "13" };

interface Org {
  ci: Record<string, string>;
  agent: Record<string, string>;
}

async function organization(name: string): Promise<Org> {
  const ci = { "x-api-key": await server.token(await server.createClient(name, "ci")) };
  const agent = { "x-api-key": await server.token(await server.createClient(name, "agent")) };
  await registerBasicApp(server, ci);
  return { ci, agent };
}

async function trigger(org: Org, plan: Record<string, unknown>): Promise<string> {
  const created = await call(`${server.baseUrl}/testplans`, {
    headers: org.ci,
    json: { name: "plan", package_name: "com.example.basic", ...plan },
  });
  expect(created.status).toBe(201);
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers: org.ci,
    json: { test_plan_id: created.body.id, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(run.status).toBe(200);
  return run.body.execution.id;
}

const claim = (org: Org, json: Record<string, unknown>) =>
  call(`${server.baseUrl}/agent/claim`, { headers: org.agent, json: { devices: [], ...json } });
const agents = async (headers: Record<string, string>) => {
  const response = await call(`${server.baseUrl}/agents`, { headers });
  expect(response.status).toBe(200);
  return response.body.items;
};
const execution = async (org: Org, id: string) =>
  (await call(`${server.baseUrl}/executions/${id}`, { headers: org.ci })).body;
const listed = async (org: Org, id: string) =>
  (await call(`${server.baseUrl}/executions?limit=100`, { headers: org.ci })).body.items.find(
    (item: { id: string }) => item.id === id,
  );

beforeAll(async () => {
  server = await startTestServer({
    env: {
      TESTBAY_RATE_LIMIT_BURST: "100000",
      TESTBAY_AGENT_RATE_LIMIT_BURST: "100000",
      // Long enough that moving the clock to take an agent offline never sweeps a held lease.
      TESTBAY_LEASE_TTL_SECONDS: "3600",
    },
  });
});
afterAll(() => server.close());

describe("GET /v1/agents", () => {
  it("shows an agent after its claim: its step types, devices (busy while leased) and running executions", async () => {
    const acme = await organization("acme");
    const other = await organization("globex");
    expect(await agents(acme.ci)).toEqual([]);

    const executionId = await trigger(acme, {
      steps: [inspect],
      devices: [{ platform: "android", model: "Pixel 7" }],
    });
    const claimed = await claim(acme, {
      agent_id: "lab-host-1",
      devices: [pixel7, pixel6],
      step_types: ["instrumentation"],
    });
    expect(claimed.status).toBe(200);
    const seenAt = new Date(server.clock.now()).toISOString();

    // Any role of the organization may look: the CI client here.
    expect(await agents(acme.ci)).toEqual([
      {
        id: "lab-host-1",
        name: "lab-host-1",
        serves: "own_organization",
        online: true,
        last_seen_at: seenAt,
        step_types: ["inspect", "instrumentation"],
        devices: [
          { ...pixel7, state: "busy" },
          { ...pixel6, state: "idle" },
        ],
        running: [executionId],
        // Not started with --appium: its claim said nothing of Appium.
        appium: null,
      },
    ]);
    // Another organization never sees it, whatever its role.
    expect(await agents(other.ci)).toEqual([]);
    expect(await agents(other.agent)).toEqual([]);

    // A heartbeat keeps a busy agent online: it renews last_seen_at.
    server.clock.advance(50_000);
    const lease = claimed.body.job.lease_id;
    const beat = await call(`${server.baseUrl}/agent/jobs/${lease}/heartbeat`, {
      method: "POST",
      headers: acme.agent,
    });
    expect(beat.status).toBe(200);
    const [afterBeat] = await agents(acme.agent);
    expect(afterBeat.last_seen_at).toBe(new Date(server.clock.now()).toISOString());

    const done = await call(`${server.baseUrl}/agent/jobs/${lease}/complete`, {
      headers: acme.agent,
      json: { status: "passed" },
    });
    expect(done.status).toBe(200);
    const [idle] = await agents(acme.ci);
    expect(idle.devices.map((d: { state: string }) => d.state)).toEqual(["idle", "idle"]);
    expect(idle.running).toEqual([]);

    // Silent for longer than two claim long-polls and a margin: offline, but still listed.
    server.clock.advance(80_000);
    const [gone] = await agents(acme.ci);
    expect(gone).toMatchObject({ id: "lab-host-1", online: false });
  });

  it("takes what a new claim offers, replacing what the last one did", async () => {
    const org = await organization("hooli");
    await claim(org, { agent_id: "a", devices: [pixel7], step_types: ["shell"] });
    await claim(org, { agent_id: "a", devices: [], step_types: [] });
    const [agent] = await agents(org.ci);
    expect(agent).toMatchObject({ step_types: ["inspect"], devices: [], online: true });
  });

  it("shows the Appium an agent started with --appium offers, until a claim without it", async () => {
    const org = await organization("massive-dynamic");
    const appium = {
      version: "2.19.0",
      drivers: [
        { name: "uiautomator2", automation_name: "UiAutomator2", platform_names: ["Android"] },
        { name: "xcuitest", automation_name: "XCUITest", platform_names: ["iOS", "tvOS"] },
      ],
    };
    expect(
      (await claim(org, { agent_id: "appium-host", devices: [pixel7], step_types: ["appium"], appium }))
        .status,
    ).toBe(204);
    expect((await claim(org, { agent_id: "plain-host", devices: [pixel6] })).status).toBe(204);
    const [withAppium, without] = await agents(org.ci);
    expect(withAppium).toMatchObject({ id: "appium-host", step_types: ["appium", "inspect"], appium });
    expect(without).toMatchObject({ id: "plain-host", appium: null });

    // The same agent restarted without --appium: its next claim takes the Appium away at once.
    expect((await claim(org, { agent_id: "appium-host", devices: [pixel7] })).status).toBe(204);
    const [restarted] = await agents(org.ci);
    expect(restarted).toMatchObject({ id: "appium-host", appium: null });
  });

  it("refuses a claim whose appium is not what an agent's Appium says", async () => {
    const org = await organization("wayne");
    const refused = await claim(org, {
      agent_id: "odd-host",
      appium: { version: "2.19.0", drivers: [{ name: "uiautomator2", platform_names: ["Android"] }] },
    });
    expect(refused.status).toBe(400);
    expect(await agents(org.ci)).toEqual([]);
  });
});

describe("waiting_reason", () => {
  it("says no agent is online when none is", async () => {
    const org = await organization("umbrella");
    const id = await trigger(org, { steps: [inspect] });
    expect((await execution(org, id)).waiting_reason).toEqual({
      code: "no_capable_agent",
      detail: expect.stringContaining("no agent is online"),
    });
  });

  it("names the step type nobody offers for a shell plan when only an inspect-only agent is online", async () => {
    const org = await organization("initech");
    const id = await trigger(org, { steps: [inspect, shell] });
    expect((await claim(org, { agent_id: "inspector" })).status).toBe(204);
    const expected = {
      code: "no_capable_agent",
      detail: "no agent offers step type shell: start one with --allow-shell",
    };
    expect((await execution(org, id)).waiting_reason).toEqual(expected);
    expect((await listed(org, id)).waiting_reason).toEqual(expected);
  });

  it("names the device model nobody has", async () => {
    const org = await organization("cyberdyne");
    const id = await trigger(org, { steps: [inspect], devices: [{ platform: "android", model: "Pixel 8" }] });
    expect((await claim(org, { agent_id: "lab", devices: [pixel7], host: false })).status).toBe(204);
    expect((await execution(org, id)).waiting_reason).toEqual({
      code: "no_capable_agent",
      detail: expect.stringMatching(/^no android device matches model Pixel 8: /),
    });
  });

  it("is null when a capable agent is online, and when the execution runs", async () => {
    const org = await organization("soylent");
    const first = await trigger(org, { steps: [inspect, shell] });
    const taken = await claim(org, { agent_id: "shell-host", step_types: ["shell"] });
    expect(taken.status).toBe(200);
    expect(taken.body.job.execution_id).toBe(first);
    const running = await execution(org, first);
    expect(running.status).toBe("running");
    expect(running.waiting_reason).toBeNull();

    // Queued behind the busy agent: it waits for a free agent, not for a capable one.
    const second = await trigger(org, { steps: [inspect, shell] });
    const queued = await execution(org, second);
    expect(queued.status).toBe("queued");
    expect(queued.waiting_reason).toBeNull();
    expect((await listed(org, second)).waiting_reason).toBeNull();
  });
});
