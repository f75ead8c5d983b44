import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";

/**
 * API.md §13 on the server: what agents say of their devices (GET /v1/agents, the device run), which devices get
 * runs, a plan's device selectors in the claim and the waiting reason, shards: "auto", and setup_ms.
 */

let server: TestServer;

interface Org {
  ci: Record<string, string>;
  agent: Record<string, string>;
}

let orgCount = 0;
async function organization(): Promise<Org> {
  const name = `pools-${++orgCount}`;
  const ci = { "x-api-key": await server.token(await server.createClient(name, "ci")) };
  const agent = { "x-api-key": await server.token(await server.createClient(name, "agent")) };
  await registerBasicApp(server, ci);
  return { ci, agent };
}

const inspect = { type: "inspect", expect: { debuggable: false } };
const maestro = (options: Record<string, unknown> = {}) => ({
  type: "maestro",
  flows: ["appId: com.example.basic\n---\n- launchApp\n"],
  ...options,
});

const createPlan = (org: Org, plan: Record<string, unknown>) =>
  call(`${server.baseUrl}/testplans`, {
    headers: org.ci,
    json: { name: "plan", package_name: "com.example.basic", steps: [inspect], ...plan },
  });

async function trigger(org: Org, planId: string): Promise<string> {
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers: org.ci,
    json: { test_plan_id: planId, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(run.status).toBe(200);
  return run.body.execution.id;
}

async function planAndTrigger(org: Org, plan: Record<string, unknown>): Promise<string> {
  const created = await createPlan(org, plan);
  expect(created.status).toBe(201);
  return trigger(org, created.body.id);
}

const claim = (org: Org, agentId: string, devices: unknown[], more: Record<string, unknown> = {}) =>
  call(`${server.baseUrl}/agent/claim`, {
    headers: org.agent,
    json: { agent_id: agentId, devices, host: false, ...more },
  });
const execution = async (org: Org, id: string) =>
  (await call(`${server.baseUrl}/executions/${id}`, { headers: org.ci })).body;
const agents = async (org: Org) => (await call(`${server.baseUrl}/agents`, { headers: org.ci })).body.items;

const device = (serial: string, facts: Record<string, unknown> = {}) => ({
  serial,
  platform: "android",
  model: "Pixel 7",
  os_version: "14",
  ...facts,
});

beforeAll(async () => {
  server = await startTestServer({
    env: {
      TESTBAY_RATE_LIMIT_BURST: "100000",
      TESTBAY_AGENT_RATE_LIMIT_BURST: "100000",
      TESTBAY_LEASE_TTL_SECONDS: "3600",
    },
  });
});
afterAll(() => server.close());

describe("what a device is", () => {
  it("lists the facts and states agents send, and records them on the device run they claim", async () => {
    const org = await organization();
    const managed = device("emulator-5554", {
      api_level: 34,
      abi: "x86_64",
      emulator: true,
      managed: true,
      pool: "Pixel_7_API_34",
      labels: { gpu: "host" },
      state: "idle",
      error: null,
    });
    const failed = device("emulator-5556", {
      api_level: 34,
      emulator: true,
      managed: true,
      pool: "Pixel_7_API_34",
      state: "failed",
      error: "emulator: PANIC: Missing emulator engine program for 'x86_64' CPU.",
    });
    const booting = device("emulator-5558", {
      emulator: true,
      managed: true,
      pool: "Pixel_7_API_34",
      state: "booting",
    });
    expect((await claim(org, "lab", [managed, failed, booting])).status).toBe(204);
    const [agent] = await agents(org);
    expect(agent.devices).toEqual([managed, failed, booting]);

    const id = await planAndTrigger(org, { devices: [{ platform: "android" }] });
    const taken = await claim(org, "lab", [managed, failed, booting]);
    expect(taken.status).toBe(200);
    expect(taken.body.job.device).toEqual(managed);
    expect((await execution(org, id)).devices[0].claimed_device).toEqual(managed);
    const busy = (await agents(org))[0].devices.find((d: { serial: string }) => d.serial === "emulator-5554");
    expect(busy).toEqual({ ...managed, state: "busy" });
  });

  it("gives runs to idle devices only: never to booting, busy, resetting, drained or failed ones", async () => {
    const org = await organization();
    const id = await planAndTrigger(org, { devices: [{ platform: "android" }] });
    const unavailable = ["booting", "busy", "resetting", "drained", "failed"].map((state, i) =>
      device(`emulator-55${60 + 2 * i}`, { state }),
    );
    expect((await claim(org, "lab", unavailable)).status).toBe(204);
    expect((await execution(org, id)).status).toBe("queued");

    // An agent older than states says none: its devices are idle.
    const taken = await claim(org, "lab", [...unavailable, device("R58M123")]);
    expect(taken.status).toBe(200);
    expect(taken.body.job.device.serial).toBe("R58M123");
  });

  it("counts no failed device as one a run can wait for, and a booting one as such", async () => {
    const org = await organization();
    const id = await planAndTrigger(org, { devices: [{ platform: "android" }] });
    expect(
      (await claim(org, "lab", [device("emulator-5554", { state: "failed", error: "boot timed out" })]))
        .status,
    ).toBe(204);
    expect((await execution(org, id)).waiting_reason.detail).toMatch(
      /^no android device is connected to an agent that can run this plan/,
    );
    // A booting device will take it: the run only waits.
    expect((await claim(org, "lab", [device("emulator-5556", { state: "booting" })])).status).toBe(204);
    expect((await execution(org, id)).waiting_reason).toBeNull();
  });
});

describe("selectors", () => {
  const cases: Array<{
    selector: Record<string, unknown>;
    refused: Array<Record<string, unknown>>;
    reason: string;
    matched: Record<string, unknown>;
  }> = [
    {
      selector: { api_level_min: 35 },
      refused: [{ api_level: 34 }, { api_level: 33 }],
      reason: "no android device matches api_level ≥ 35 (online: 33, 34)",
      matched: { api_level: 35 },
    },
    {
      selector: { api_level_max: 30 },
      refused: [{ api_level: 33 }, {}],
      reason: "no android device matches api_level ≤ 30 (online: 33, unknown)",
      matched: { api_level: 30 },
    },
    {
      selector: { os_version_min: "10.1" },
      refused: [{ os_version: "10" }, { os_version: "9" }, { os_version: "10.0" }],
      reason: "no android device matches OS version ≥ 10.1 (online: 9, 10, 10.0)",
      matched: { os_version: "10.2" },
    },
    {
      selector: { os_version_max: "10" },
      refused: [{ os_version: "10.1" }, { os_version: "11" }],
      reason: "no android device matches OS version ≤ 10 (online: 10.1, 11)",
      matched: { os_version: "9" },
    },
    {
      selector: { models: ["Pixel 8", "Pixel 9"] },
      refused: [{ model: "Pixel 7" }],
      reason: "no android device matches models Pixel 8 or Pixel 9 (online: Pixel 7)",
      matched: { model: "Pixel 9" },
    },
    {
      selector: { abi: "x86_64" },
      refused: [{ abi: "arm64-v8a" }],
      reason: "no android device matches abi x86_64 (online: arm64-v8a)",
      matched: { abi: "x86_64" },
    },
    {
      selector: { emulator: false },
      refused: [{ emulator: true }],
      reason: "no android device matches emulator false (online: emulator)",
      matched: { emulator: false },
    },
    {
      selector: { labels: { gpu: "host", tier: "fast" } },
      refused: [{ labels: { gpu: "host" } }, { labels: { gpu: "swiftshader", tier: "fast" } }],
      reason:
        "no android device matches labels gpu=host, tier=fast (online: gpu=host, gpu=swiftshader,tier=fast)",
      matched: { labels: { gpu: "host", tier: "fast", room: "b2" } },
    },
  ];

  for (const { selector, refused, reason, matched } of cases) {
    it(`${JSON.stringify(selector)}: a run waits, saying why, until a matching device is offered`, async () => {
      const org = await organization();
      const id = await planAndTrigger(org, { devices: [{ platform: "android", ...selector }] });
      const refusedDevices = refused.map((facts, i) => device(`refused-${i}`, facts));
      expect((await claim(org, "lab", refusedDevices)).status).toBe(204);
      const waiting = await execution(org, id);
      expect(waiting.status).toBe("queued");
      expect(waiting.waiting_reason).toEqual({
        code: "no_capable_agent",
        detail: `${reason}: start an agent with such a device, or change the plan's devices`,
      });

      const taken = await claim(org, "lab", [...refusedDevices, device("matching", matched)]);
      expect(taken.status).toBe(200);
      expect(taken.body.job.execution_id).toBe(id);
      expect(taken.body.job.device.serial).toBe("matching");
    });
  }

  it("says so when each selector is met by some device but none meets them all", async () => {
    const org = await organization();
    const id = await planAndTrigger(org, {
      devices: [{ platform: "android", api_level_min: 34, abi: "x86_64" }],
    });
    const offered = [
      device("a", { api_level: 34, abi: "arm64-v8a" }),
      device("b", { api_level: 30, abi: "x86_64" }),
    ];
    expect((await claim(org, "lab", offered)).status).toBe(204);
    expect((await execution(org, id)).waiting_reason.detail).toBe(
      "no android device matches api_level ≥ 34 and abi x86_64 together (each is met by some device online, none meets them all): start an agent with such a device, or change the plan's devices",
    );
    const taken = await claim(org, "lab", [...offered, device("c", { api_level: 35, abi: "x86_64" })]);
    expect(taken.body.job.device.serial).toBe("c");
  });

  it("keeps the entry's model and OS version beside the selectors", async () => {
    const org = await organization();
    const id = await planAndTrigger(org, {
      devices: [{ platform: "android", model: "Pixel 8", api_level_min: 34 }],
    });
    expect((await claim(org, "lab", [device("a", { model: "Pixel 8", api_level: 33 })])).status).toBe(204);
    expect((await execution(org, id)).waiting_reason.detail).toMatch(
      /^no android device matches model Pixel 8 and api_level ≥ 34 \(online: 33\)/,
    );
    expect((await claim(org, "lab", [device("b", { model: "Pixel 7", api_level: 35 })])).status).toBe(204);
    expect((await claim(org, "lab", [device("c", { model: "Pixel 8", api_level: 34 })])).status).toBe(200);
  });

  it("refuses contradictions with a 400 that says how to fix them", async () => {
    const org = await organization();
    const refused = async (plan: Record<string, unknown>) => {
      const response = await createPlan(org, plan);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe("invalid_request");
      return response.body;
    };
    const both = await refused({ devices: [{ platform: "android", model: "Pixel 7", models: ["Pixel 8"] }] });
    expect(both.detail).toBe("The plan is invalid: body /devices/0/models cannot be given with model.");
    expect(both.fix).toContain('models: ["Pixel 7","Pixel 8"]');
    expect(both.errors).toEqual([
      { path: "/devices/0/models", in: "body", message: "cannot be given with model" },
    ]);

    const levels = await refused({
      devices: [{ platform: "android", api_level_min: 35, api_level_max: 33 }],
    });
    expect(levels.detail).toContain("/devices/0/api_level_min 35 is above api_level_max 33");
    expect(levels.fix).toContain("(swapped: api_level_min 33, api_level_max 35)");

    const versions = await refused({
      devices: [{ platform: "android", os_version_min: "10.1", os_version_max: "9" }],
    });
    expect(versions.detail).toContain("/devices/0/os_version_min 10.1 is above os_version_max 9");

    const notVersion = await createPlan(org, {
      devices: [{ platform: "android", os_version_min: "14-beta" }],
    });
    expect(notVersion.status).toBe(400);
    expect(JSON.stringify(notVersion.body.errors)).toContain("/devices/0/os_version_min");

    const budget = await refused({ steps: [maestro({ shards: 2, target_minutes: 5 })] });
    expect(budget.detail).toBe(
      'The plan is invalid: body /steps/0/target_minutes is only for shards: "auto".',
    );
    expect(budget.fix).toContain('shards: "auto"');

    // Within bounds, the same selectors are a plan.
    const fine = await createPlan(org, {
      devices: [
        {
          platform: "android",
          models: ["Pixel 7"],
          api_level_min: 33,
          api_level_max: 35,
          os_version_min: "9",
          os_version_max: "10.1",
        },
      ],
      steps: [maestro({ shards: "auto", target_minutes: 5, max_shards: 4 })],
    });
    expect(fine.status).toBe(201);
    expect(fine.body.devices[0]).toMatchObject({ models: ["Pixel 7"], os_version_max: "10.1" });
    expect(fine.body.steps[0]).toMatchObject({ shards: "auto", target_minutes: 5, max_shards: 4 });
  });
});

describe('shards: "auto"', () => {
  const minute = 60_000;
  const tests = [5, 5, 5, 4].map((min, i) => ({ name: `flow${i}`, ms: min * minute }));

  it("takes max_shards without history, then the plan's p80s ÷ target_minutes, capped by the matching devices online", async () => {
    const org = await organization();
    const created = await createPlan(org, {
      devices: [{ platform: "android", api_level_min: 34 }],
      steps: [maestro({ shards: "auto", target_minutes: 5, max_shards: 6 })],
    });
    const planId = created.body.id;

    // No history, and one matching device online (another is too old, another failed).
    const agentDevices = [
      device("e-1", { api_level: 34 }),
      device("old", { api_level: 33 }),
      device("broken", { api_level: 34, state: "failed", error: "gone" }),
    ];
    expect((await claim(org, "lab-1", agentDevices, { step_types: ["maestro"] })).status).toBe(204);
    const first = await trigger(org, planId);
    const firstView = await execution(org, first);
    expect(firstView.devices.map((d: { shards_planned: unknown }) => d.shards_planned)).toEqual([
      { count: 1, reason: "no test history for this plan yet: max_shards 6; 1 matching device online → 1" },
    ]);

    // Run it: 19 minutes of flows.
    const job = await claim(org, "lab-1", agentDevices, { step_types: ["maestro"] });
    expect(job.status).toBe(200);
    const lease = job.body.job.lease_id;
    const events = tests.map((test, seq) => ({
      seq,
      type: "test_case",
      step_index: 0,
      classname: "flows",
      name: test.name,
      status: "passed",
      duration_ms: test.ms,
    }));
    expect(
      (await call(`${server.baseUrl}/agent/jobs/${lease}/events`, { headers: org.agent, json: { events } }))
        .status,
    ).toBe(200);
    const done = await call(`${server.baseUrl}/agent/jobs/${lease}/complete`, {
      headers: org.agent,
      json: { status: "passed", setup_ms: 2_345 },
    });
    expect(done.body.execution_status).toBe("passed");
    expect((await execution(org, first)).devices[0].setup_ms).toBe(2_345);

    // Three matching devices online now, over two agents.
    expect(
      (
        await claim(org, "lab-2", [device("e-2", { api_level: 35 }), device("e-3", { api_level: 34 })], {
          step_types: ["maestro"],
        })
      ).status,
    ).toBe(204);
    const second = await trigger(org, planId);
    const secondView = await execution(org, second);
    const planned = { count: 3, reason: "19 min of tests ÷ 5 min = 4 shards; 3 matching devices online → 3" };
    expect(
      secondView.devices.map((d: { shard: number; shards_planned: unknown }) => [d.shard, d.shards_planned]),
    ).toEqual([
      [0, planned],
      [1, planned],
      [2, planned],
    ]);

    // The agents see a number: three shards, each step on all of them.
    const shard = await claim(org, "lab-2", [device("e-2", { api_level: 35 })], { step_types: ["maestro"] });
    expect(shard.body.job.device_run.shard_count).toBe(3);
    expect(shard.body.job.plan.steps[0]).toMatchObject({ type: "maestro", shards: 3, target_minutes: 5 });
  });

  it("caps by max_shards, and runs unsharded runs without a reason", async () => {
    const org = await organization();
    await claim(
      org,
      "lab",
      [1, 2, 3, 4, 5].map((i) => device(`e-${i}`)),
      { step_types: ["maestro"] },
    );
    const auto = await planAndTrigger(org, {
      devices: [{ platform: "android" }],
      steps: [maestro({ shards: "auto", max_shards: 2 })],
    });
    expect(
      (await execution(org, auto)).devices.map((d: { shards_planned: unknown }) => d.shards_planned),
    ).toEqual([
      { count: 2, reason: "no test history for this plan yet: max_shards 2; 5 matching devices online" },
      { count: 2, reason: "no test history for this plan yet: max_shards 2; 5 matching devices online" },
    ]);
    const fixed = await planAndTrigger(org, {
      devices: [{ platform: "android" }],
      steps: [maestro({ shards: 2 })],
    });
    const view = await execution(org, fixed);
    expect(
      view.devices.map((d: { shards_planned: unknown; setup_ms: unknown }) => [d.shards_planned, d.setup_ms]),
    ).toEqual([
      [null, null],
      [null, null],
    ]);
  });
});
