import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";

/**
 * Fleet agents (API.md §15 "Fair share, limits and priorities"; migration 0034): an agent whose client was made
 * with `--all-orgs` is listed by GET /v1/agents of every organization it serves, and counted by their waiting
 * reasons and `shards: "auto"`, without showing one organization another's executions. The agents are stand-ins
 * that speak the agent protocol over HTTP, as in device-runs/fair-share.int.test.ts.
 */

let server: TestServer;
/** The agent client made with --all-orgs, of the organization "platform". */
let fleet: Record<string, string>;
/** A person-less CI client of "platform", to read what that organization sees. */
let platform: Record<string, string>;

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

const model = "Fleet Phone";
const device = (serial: string) => ({ serial, platform: "android", model, os_version: "14" });
const rack = [device("rack-1"), device("rack-2")];
const inspect = { type: "inspect", expect: { debuggable: false } };

async function trigger(org: Org, plan: Record<string, unknown>): Promise<string> {
  const created = await call(`${server.baseUrl}/testplans`, {
    headers: org.ci,
    json: { name: "plan", package_name: "com.example.basic", steps: [inspect], ...plan },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers: org.ci,
    json: { test_plan_id: created.body.id, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(run.status, JSON.stringify(run.body)).toBe(200);
  return run.body.execution.id;
}

interface Job {
  lease_id: string;
  execution_id: string;
  device: { serial: string };
}

/** One claim (no waiting) offering these devices: the job, or undefined on a 204. */
async function claim(headers: Record<string, string>, agentId: string, devices: unknown[]) {
  const answer = await call(`${server.baseUrl}/agent/claim`, {
    headers,
    json: { agent_id: agentId, devices, host: false, wait_seconds: 0, step_types: ["maestro"] },
  });
  expect([200, 204], JSON.stringify(answer.body)).toContain(answer.status);
  return answer.status === 200 ? (answer.body.job as Job) : undefined;
}

const agents = async (headers: Record<string, string>) => {
  const response = await call(`${server.baseUrl}/agents`, { headers });
  expect(response.status).toBe(200);
  return response.body.items;
};
const execution = async (org: Org, id: string) =>
  (await call(`${server.baseUrl}/executions/${id}`, { headers: org.ci })).body;
const heartbeat = (lease: string) =>
  call(`${server.baseUrl}/agent/jobs/${lease}/heartbeat`, { method: "POST", headers: fleet });
const at = () => new Date(server.clock.now()).toISOString();

beforeAll(async () => {
  server = await startTestServer({
    env: {
      TESTBAY_RATE_LIMIT_BURST: "100000",
      TESTBAY_AGENT_RATE_LIMIT_BURST: "100000",
      // Long enough that moving the clock to take the fleet agent offline never sweeps a held lease.
      TESTBAY_LEASE_TTL_SECONDS: "3600",
    },
  });
  platform = { "x-api-key": await server.token(await server.createClient("platform", "ci")) };
  const shared = await server.app.services.clients.createClient("platform", "agent", undefined, "fleet", {
    allOrganizations: true,
  });
  fleet = { "x-api-key": await server.token(shared) };
});
afterAll(() => server.close());

describe("a fleet agent", () => {
  it("is listed, busy and counted for every organization, each seeing only its own executions on it", async () => {
    const [a, b] = [await organization("fleet-a"), await organization("fleet-b")];
    const entry = { devices: [{ platform: "android", model }] };

    // No agent has claimed yet: B's run waits for one.
    const bRunning = await trigger(b, entry);
    expect((await execution(b, bRunning)).waiting_reason).toEqual({
      code: "no_capable_agent",
      detail: expect.stringContaining("no agent is online"),
    });
    expect(await agents(b.ci)).toEqual([]);

    // The fleet agent takes one run of each organization, one on each of its devices.
    const aRunning = await trigger(a, entry);
    const first = await claim(fleet, "rack-host", rack);
    const second = await claim(
      fleet,
      "rack-host",
      rack.filter((d) => d.serial !== first?.device.serial),
    );
    if (!first || !second) throw new Error("the fleet agent got no job");
    expect(new Set([first.execution_id, second.execution_id])).toEqual(new Set([aRunning, bRunning]));
    const bSerial = (first.execution_id === bRunning ? first : second).device.serial;
    const seenAt = at();

    // A plain agent of A, for A alone.
    expect(await claim(a.agent, "a-host", [])).toBeUndefined();

    const fleetView = (running: string[]) => ({
      id: "rack-host",
      name: "rack-host",
      serves: "all_organizations",
      online: true,
      last_seen_at: seenAt,
      step_types: ["inspect", "maestro"],
      devices: rack.map((d) => ({ ...d, state: "busy" })),
      running,
      appium: null,
    });
    const bView = await agents(b.ci);
    expect(bView).toEqual([fleetView([bRunning])]);
    // Nothing of A's run reaches B: neither its execution nor A's own agent.
    expect(JSON.stringify(bView)).not.toContain(aRunning);
    expect(await agents(b.agent)).toEqual([fleetView([bRunning])]);

    const aView = await agents(a.ci);
    expect(aView).toEqual([
      {
        id: "a-host",
        name: "a-host",
        serves: "own_organization",
        online: true,
        last_seen_at: seenAt,
        step_types: ["inspect", "maestro"],
        devices: [],
        running: [],
        appium: null,
      },
      fleetView([aRunning]),
    ]);
    expect(JSON.stringify(aView)).not.toContain(bRunning);
    // Its client's organization sees it too, busy with others' runs and running none of its own.
    expect(await agents(platform)).toEqual([fleetView([])]);

    // B's next run waits for a free device of the fleet agent, not for an agent: no waiting reason.
    const bQueued = await trigger(b, entry);
    const queued = await execution(b, bQueued);
    expect(queued.status).toBe("queued");
    expect(queued.waiting_reason).toBeNull();

    // shards: "auto" counts the fleet agent's devices (busy ones too) as B's matching devices online.
    const sharded = await trigger(b, {
      ...entry,
      steps: [
        {
          type: "maestro",
          flows: ["appId: com.example.basic\n---\n- launchApp\n"],
          shards: "auto",
          max_shards: 6,
        },
      ],
    });
    const planned = {
      count: 2,
      reason: "no test history for this plan yet: max_shards 6; 2 matching devices online → 2",
    };
    // One device run per shard, each saying why.
    expect(
      (await execution(b, sharded)).devices.map((d: { shards_planned: unknown }) => d.shards_planned),
    ).toEqual([planned, planned]);

    // Busy on both devices it claims no more; its heartbeats for either organization's run keep it online.
    server.clock.advance(50_000);
    expect((await heartbeat(first.lease_id)).status).toBe(200);
    expect((await heartbeat(second.lease_id)).status).toBe(200);
    const [beaten] = await agents(b.ci);
    expect(beaten).toMatchObject({ online: true, last_seen_at: at(), running: [bRunning] });

    // B's run ends: the device A's run holds is still busy, for B as for A, and B's view runs nothing.
    const bJob = first.execution_id === bRunning ? first : second;
    const done = await call(`${server.baseUrl}/agent/jobs/${bJob.lease_id}/complete`, {
      headers: fleet,
      json: { status: "passed" },
    });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    const stateOf = (view: Array<{ id: string; devices: Array<{ serial: string; state: string }> }>) =>
      Object.fromEntries(
        (view.find((agent) => agent.id === "rack-host")?.devices ?? []).map((d) => [d.serial, d.state]),
      );
    const aSerial = rack.find((d) => d.serial !== bSerial)?.serial as string;
    for (const view of [await agents(b.ci), await agents(a.ci)]) {
      expect(stateOf(view)[aSerial]).toBe("busy");
    }
    expect((await agents(b.ci))[0].running).toEqual([]);

    // Silent for longer than the online window: offline for B, whose queued run has no agent again.
    server.clock.advance(80_000);
    expect(await agents(b.ci)).toEqual([expect.objectContaining({ id: "rack-host", online: false })]);
    expect((await execution(b, bQueued)).waiting_reason).toEqual({
      code: "no_capable_agent",
      detail: expect.stringContaining("no agent is online"),
    });
  });
});
