import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";
import { ManualClock } from "../../clock.ts";

/**
 * API.md §15 "Fair share, limits and priorities" on the server: an `--all-orgs` agent client claims the runs of
 * every organization, fairly between them; priorities within an organization; an organization's limit on its
 * running device runs, under agents claiming at once; an organization's own agents serve only it. The agents
 * are stand-ins that speak the agent protocol over HTTP, as in device-pools.int.test.ts. Each test offers
 * devices of a model of its own, so that the runs other tests leave queued are never theirs to take.
 */

/**
 * A clock that moves 1 ms at every reading: every start and end the server records is a time of its own, so
 * that the device runs' times say in which order things happened (the limit's check below).
 */
class TickingClock extends ManualClock {
  override now(): number {
    const now = super.now();
    this.advance(1);
    return now;
  }
}

let server: TestServer;
/** The agent client made with --all-orgs, and its token. */
let fleet: Record<string, string>;

interface Org {
  name: string;
  ci: Record<string, string>;
  agent: Record<string, string>;
}

let orgCount = 0;
async function organization(): Promise<Org> {
  const name = `fair-${++orgCount}`;
  const ci = { "x-api-key": await server.token(await server.createClient(name, "ci")) };
  const agent = { "x-api-key": await server.token(await server.createClient(name, "agent")) };
  await registerBasicApp(server, ci);
  return { name, ci, agent };
}

const inspect = { type: "inspect", expect: { debuggable: false } };
const device = (model: string, serial: string) => ({ serial, platform: "android", model, os_version: "14" });

/** A plan of `runs` device entries of `model` (one device run each, at most 20). */
async function plan(org: Org, model: string, runs: number): Promise<string> {
  const created = await call(`${server.baseUrl}/testplans`, {
    headers: org.ci,
    json: {
      name: `${runs} on ${model}`,
      package_name: "com.example.basic",
      steps: [inspect],
      devices: Array.from({ length: runs }, () => ({ platform: "android", model })),
    },
  });
  expect(created.status).toBe(201);
  return created.body.id;
}

async function trigger(org: Org, planId: string, more: Record<string, unknown> = {}): Promise<string> {
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers: org.ci,
    json: { test_plan_id: planId, package_name: "com.example.basic", version: "1.2.3", ...more },
  });
  expect(run.status, JSON.stringify(run.body)).toBe(200);
  return run.body.execution.id;
}

interface Job {
  lease_id: string;
  execution_id: string;
  device: { serial: string };
  binary_url: string;
  binary: { sha256: string };
}

/** One claim (no waiting) offering these devices: the job, or undefined on a 204. */
async function claim(headers: Record<string, string>, agentId: string, devices: unknown[]) {
  const answer = await call(`${server.baseUrl}/agent/claim`, {
    headers,
    json: { agent_id: agentId, devices, host: false, wait_seconds: 0 },
  });
  expect([200, 204], JSON.stringify(answer.body)).toContain(answer.status);
  return answer.status === 200 ? (answer.body.job as Job) : undefined;
}

async function complete(headers: Record<string, string>, job: Job) {
  const done = await call(`${server.baseUrl}/agent/jobs/${job.lease_id}/complete`, {
    headers,
    json: { status: "passed" },
  });
  expect(done.status, JSON.stringify(done.body)).toBe(200);
}

const execution = async (org: Org, id: string) =>
  (await call(`${server.baseUrl}/executions/${id}`, { headers: org.ci })).body;

beforeAll(async () => {
  server = await startTestServer({
    clock: new TickingClock(),
    env: {
      TESTBAY_RATE_LIMIT_BURST: "100000",
      TESTBAY_AGENT_RATE_LIMIT_BURST: "100000",
      TESTBAY_LEASE_TTL_SECONDS: "3600",
    },
  });
  await server.createClient("fleet", "agent");
  const shared = await server.app.services.clients.createClient("fleet", "agent", undefined, "shared fleet", {
    allOrganizations: true,
  });
  fleet = { "x-api-key": await server.token(shared) };
});
afterAll(() => server.close());

describe("a fleet shared by organizations", () => {
  it("serves an organization's few runs between another's many: B's first within 2 claims, all 5 within 10", async () => {
    const [a, b] = [await organization(), await organization()];
    const model = "Fair Share 1";
    const many = await plan(a, model, 20);
    const aExecutions = new Set<string>();
    for (let i = 0; i < 10; i++) aExecutions.add(await trigger(a, many));
    const bExecutions = new Set([await trigger(b, await plan(b, model, 5))]);

    // One agent with two devices: it claims for each free device, and ends its older job when both are busy.
    const devices = [device(model, "d-1"), device(model, "d-2")];
    const running: Job[] = [];
    const order: string[] = [];
    while (order.length < 12) {
      const busy = new Set(running.map((job) => job.device.serial));
      const job = await claim(
        fleet,
        "shared-rack",
        devices.filter((d) => !busy.has(d.serial)),
      );
      if (!job) throw new Error(`no job at claim ${order.length + 1}`);
      order.push(bExecutions.has(job.execution_id) ? "B" : aExecutions.has(job.execution_id) ? "A" : "?");
      running.push(job);
      if (running.length === 2) await complete(fleet, running.shift() as Job);
    }
    expect(order).not.toContain("?");
    expect(order.indexOf("B")).toBeLessThan(2);
    expect(order.slice(0, 10).filter((org) => org === "B")).toHaveLength(5);
    // Each agent call about a run of another organization than the client's went through: the runs ended.
    expect((await execution(b, [...bExecutions][0] as string)).status).toBe("passed");
  });

  it("takes an organization's high runs before its normal ones, and normal before low", async () => {
    const org = await organization();
    const model = "Fair Share 2";
    const one = await plan(org, model, 1);
    const low = await trigger(org, one, { priority: "low" });
    const normal = [await trigger(org, one), await trigger(org, one, { priority: "normal" })];
    const high = await trigger(org, one, { priority: "high" });
    expect((await execution(org, high)).priority).toBe("high");
    expect((await execution(org, normal[0] as string)).priority).toBe("normal");
    expect((await execution(org, low)).priority).toBe("low");

    const taken: string[] = [];
    for (let i = 0; i < 4; i++) {
      // The organization's own agent and the shared fleet's agent, in turn: the same order for both.
      const headers = i % 2 === 0 ? org.agent : fleet;
      const job = await claim(headers, `prio-${i % 2}`, [device(model, `p-${i}`)]);
      if (!job) throw new Error(`no job at claim ${i + 1}`);
      taken.push(job.execution_id);
      await complete(headers, job);
    }
    expect(taken).toEqual([high, ...normal, low]);
  });

  it("refuses a priority other than high, normal or low, on both trigger calls, saying which", async () => {
    const org = await organization();
    const planId = await plan(org, "Fair Share 3", 1);
    const single = await call(`${server.baseUrl}/testplan/run`, {
      headers: org.ci,
      json: { test_plan_id: planId, package_name: "com.example.basic", version: "1.2.3", priority: "urgent" },
    });
    expect(single.status).toBe(400);
    expect(single.body.detail).toContain('"urgent"');
    expect(single.body.fix).toMatch(/high.*normal.*low/);
    const batch = await call(`${server.baseUrl}/testplan/run/batch`, {
      headers: org.ci,
      json: {
        test_plan_ids: [planId],
        package_name: "com.example.basic",
        version: "1.2.3",
        priority: "HIGH",
      },
    });
    expect(batch.status).toBe(400);
    expect(batch.body.fix).toMatch(/high.*normal.*low/);
    const high = await call(`${server.baseUrl}/testplan/run/batch`, {
      headers: org.ci,
      json: {
        test_plan_ids: [planId],
        package_name: "com.example.basic",
        version: "1.2.3",
        priority: "high",
      },
    });
    expect(high.status).toBe(200);
    expect(high.body.executions[0].priority).toBe("high");
  });

  it("never hands an organization's own agent another organization's run", async () => {
    const [mine, theirs] = [await organization(), await organization()];
    const model = "Fair Share 4";
    const theirRun = await trigger(theirs, await plan(theirs, model, 1));
    expect(await claim(mine.agent, "own", [device(model, "o-1")])).toBeUndefined();
    const myRun = await trigger(mine, await plan(mine, model, 1));
    const job = await claim(mine.agent, "own", [device(model, "o-1")]);
    expect(job?.execution_id).toBe(myRun);
    expect(await claim(mine.agent, "own", [device(model, "o-2")])).toBeUndefined();
    // The shared fleet takes it, and its lease calls about it are answered for that organization.
    const shared = await claim(fleet, "shared", [device(model, "s-1")]);
    expect(shared?.execution_id).toBe(theirRun);
    const beat = await call(`${server.baseUrl}/agent/jobs/${shared?.lease_id}/heartbeat`, {
      headers: fleet,
      method: "POST",
    });
    expect(beat.status).toBe(200);
    // Its binary, by lease: the fleet's client cannot name that organization's app.
    expect(shared?.binary_url).toBe(`/v1/agent/jobs/${shared?.lease_id}/binary`);
    const binary = await fetch(`${server.origin}${shared?.binary_url}`, { headers: fleet });
    expect(binary.status).toBe(200);
    const bytes = Buffer.from(await binary.arrayBuffer());
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(shared?.binary.sha256);
    await complete(fleet, shared as Job);
    expect((await execution(theirs, theirRun)).status).toBe("passed");
    // Another organization's agent cannot touch that lease.
    const foreign = await call(`${server.baseUrl}/agent/jobs/${job?.lease_id}/heartbeat`, {
      headers: theirs.agent,
      method: "POST",
    });
    expect(foreign.status).toBe(409);
  });
});

describe("an organization's limit on running device runs", () => {
  it("holds under 8 agents claiming at once: never more running than allowed, by the runs' start and end times", async () => {
    const org = await organization();
    const limit = 2;
    await server.app.services.clients.setOrganizationLimits(org.name, limit);
    const model = "Fair Share 5";
    const twenty = await plan(org, model, 20);
    const executions = [await trigger(org, twenty), await trigger(org, await plan(org, model, 4))];

    // 8 agents, half the organization's own, half the shared fleet's, each with a device: they claim all at
    // once, then end what they got all at once, until every run ended.
    const agents = Array.from({ length: 8 }, (_, i) => ({
      headers: i % 2 === 0 ? org.agent : fleet,
      id: `limited-${i}`,
      device: device(model, `l-${i}`),
    }));
    let ended = 0;
    for (let round = 0; ended < 24; round++) {
      if (round > 200) throw new Error(`only ${ended} of 24 runs ended after 200 rounds`);
      const jobs = await Promise.all(agents.map((a) => claim(a.headers, a.id, [a.device])));
      const taken = jobs.flatMap((job, i) => (job ? [{ job, headers: agents[i]?.headers ?? fleet }] : []));
      expect(taken.length).toBeLessThanOrEqual(limit);
      if (round === 0) {
        // While the limit is reached, the other executions say why they wait.
        const waiting = await call(`${server.baseUrl}/executions?status=queued`, { headers: org.ci });
        expect(waiting.body.items.length).toBeGreaterThan(0);
        for (const view of waiting.body.items) expect(view.waiting_reason?.code).toBe("org_limit");
      }
      await Promise.all(taken.map(({ job, headers }) => complete(headers, job)));
      ended += taken.length;
    }

    // From the device runs' times: at each start, how many runs had started and not yet ended.
    const runs = (await Promise.all(executions.map((id) => execution(org, id)))).flatMap((e) => e.devices);
    expect(runs).toHaveLength(24);
    const spans = runs.map((run: { started_at: string; finished_at: string }) => ({
      start: Date.parse(run.started_at),
      end: Date.parse(run.finished_at),
    }));
    const most = Math.max(
      ...spans.map(({ start }) => spans.filter((s) => s.start <= start && start < s.end).length),
    );
    expect(most).toBeLessThanOrEqual(limit);
    expect(most).toBe(limit);
    for (const id of executions) expect((await execution(org, id)).status).toBe("passed");
  });

  it("is lifted with null: the runs start again as devices free up", async () => {
    const org = await organization();
    const model = "Fair Share 6";
    await server.app.services.clients.setOrganizationLimits(org.name, 1);
    await trigger(org, await plan(org, model, 2));
    expect(await claim(org.agent, "lift", [device(model, "x-1")])).toBeDefined();
    expect(await claim(org.agent, "lift", [device(model, "x-2")])).toBeUndefined();
    await server.app.services.clients.setOrganizationLimits(org.name, null);
    expect(await claim(org.agent, "lift", [device(model, "x-2")])).toBeDefined();
  });
});
