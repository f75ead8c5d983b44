/**
 * Appium sessions on a fleet, end to end (issue 27; API.md §12; docs/appium-relay.md): a real server on a port, a
 * real `testbay-agent --appium` process with Appium's fake driver (fake-driver-home.ts) on the stand-in Android
 * lab's two devices, and real `webdriverio` clients at `/wd/hub`, as in agent-appium.int.test.ts. What this file
 * holds: three sessions on two devices (the third waits for the first freed one, never two on one device); an
 * agent killed outright (its sessions are lost, its run errored, its Appium stopped by the watchdog); commands that
 * are never rate-limited; and `setSessionStatus` answered by Testbay and standing over the DELETE's "passed".
 */
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { remote } from "webdriverio";
import type { IssuedCredentials } from "../../../server/src/features/clients/index.ts";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../server/test/harness.ts";
import { isPortFree, PORTS_PER_BLOCK } from "../../src/appium/port-blocks.ts";
import { type AgentProcess, startAgentProcess, stopAgentProcesses, waitFor } from "../agent-process.ts";
import { createDeviceLab, type DeviceLab } from "../stand-ins/device-lab.ts";
import { FAKE_APP, type FakeDriverHome, fakeDriverAgentArgs, installFakeDriver } from "./fake-driver-home.ts";

/** A server, its ci client and its agents' client. */
interface Site {
  server: TestServer;
  ci: Record<string, string>;
  ciCredentials: IssuedCredentials;
  agentCredentials: { client_id: string; client_secret: string };
}

/** Roomy client limits, for the tests that poll the API while they wait. */
let roomy: Site;
/** The client's normal rate limit (burst 20, 4 per second): for the test that commands are never limited. */
let strict: Site;
let scratch: string;
let fake: FakeDriverHome;
let lab: DeviceLab;
const running: ChildProcess[] = [];

const DEVICES = [
  { serial: "emulator-5554", model: "Pixel 7", release: "14", sdk: 34 },
  { serial: "emulator-5556", model: "Pixel 7", release: "14", sdk: 34 },
];
// Apart from the other Appium suites' ranges (agent-appium, appium-server, appium-session, appium-step).
const PORTS = { from: 25430, to: 25529 };
/** The first port of each block of the agent's range: where a session's Appium listens. */
const BLOCK_PORTS = Array.from(
  { length: Math.floor((PORTS.to - PORTS.from + 1) / PORTS_PER_BLOCK) },
  (_, index) => PORTS.from + index * PORTS_PER_BLOCK,
);

async function openSite(env: Record<string, string>, graceMs?: number): Promise<Site> {
  const server = await startTestServer({
    env: {
      TESTBAY_AGENT_RATE_LIMIT_BURST: "100000",
      // Heartbeats every 2 s; a killed agent's lease lapses 6 s after its last one.
      TESTBAY_LEASE_TTL_SECONDS: "6",
      ...env,
    },
    // The channel's grace before an agent's sessions are lost is 10 s in production; shorter here.
    ...(graceMs === undefined ? {} : { channel: { graceMs } }),
  });
  const ciCredentials = await server.createClient("acme", "ci");
  const ci = { "x-api-key": await server.token(ciCredentials) };
  const agentCredentials = await server.createClient("acme", "agent");
  await registerBasicApp(server, ci, "1.0.0");
  return { server, ci, ciCredentials, agentCredentials };
}

function startAgent(site: Site, name: string): AgentProcess {
  return startAgentProcess({
    name,
    baseUrl: site.server.baseUrl,
    audience: site.server.config.audience,
    credentials: site.agentCredentials,
    scratch,
    args: fakeDriverAgentArgs(`${PORTS.from}-${PORTS.to}`),
    env: { ...lab.env, APPIUM_HOME: fake.home },
    running,
  });
}

const execution = async (site: Site, id: string) =>
  (await call(`${site.server.baseUrl}/executions/${id}`, { headers: site.ci })).body;
const finished = (site: Site, id: string) =>
  waitFor(`execution ${id} to end`, async () => {
    const answer = await call(`${site.server.baseUrl}/executions/${id}`, { headers: site.ci });
    if (answer.status !== 200) return false;
    return !["queued", "running"].includes(answer.body.status) && answer.body;
  });
/**
 * The strict site's end of a session. Its clock moves only when told (the test harness's), so its ci client's
 * bucket never refills: once the burst is spent every read is refused. So the wait is first for the agent to say
 * the session ended (its log, no request), then for the server to show it, a read a second: a loaded machine
 * spent the burst on 100 ms polls before the agent had reported, and the wait never saw the end.
 */
async function finishedOnStrict(agent: AgentProcess, id: string) {
  await waitFor(`the agent to end session ${id}`, async () => agent.output().includes(`session ${id} ended`));
  for (let read = 1; read <= 15; read++) {
    const answer = await call(`${strict.server.baseUrl}/executions/${id}`, { headers: strict.ci });
    if (answer.status === 200 && !["queued", "running"].includes(answer.body.status)) return answer.body;
    if (read === 15)
      throw new Error(`execution ${id} not ended: ${answer.status} ${JSON.stringify(answer.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
const artifactText = async (site: Site, id: string, name: string) =>
  (await fetch(`${site.server.baseUrl}/executions/${id}/artifacts/${name}`, { headers: site.ci })).text();

/** The fake driver's capabilities, on one of the lab's Android devices (testbay:options.platform). */
const fakeOnAndroid = (name: string) =>
  ({
    platformName: "Fake",
    "appium:automationName": "Fake",
    "appium:app": FAKE_APP,
    "testbay:options": { platform: "android", name, queue_timeout_seconds: 120 },
  }) as WebdriverIO.Capabilities;

/** A webdriverio session at the site's `/wd/hub` with its ci client's ID and secret (HTTP Basic). */
function newSession(site: Site, agent: AgentProcess, name: string) {
  const { port } = new URL(site.server.origin);
  return remote({
    hostname: "127.0.0.1",
    port: Number(port),
    path: "/wd/hub",
    protocol: "http",
    user: site.ciCredentials.client_id,
    key: site.ciCredentials.client_secret,
    logLevel: "silent",
    connectionRetryCount: 0,
    connectionRetryTimeout: 180_000,
    capabilities: fakeOnAndroid(name),
  }).catch((error: Error) => {
    throw new Error(`${error.message}\nagent said:\n${agent.output()}`);
  });
}

/** The device a session's run holds, as its execution says. */
async function deviceOf(site: Site, id: string): Promise<string> {
  const view = await execution(site, id);
  return view.devices[0].claimed_device.serial as string;
}

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), "testbay-appium-fleet-"));
  fake = await installFakeDriver();
  lab = await createDeviceLab({ devices: DEVICES, timeScale: 0.05 });
  roomy = await openSite({ TESTBAY_RATE_LIMIT_BURST: "100000" }, 2000);
  // No TESTBAY_RATE_LIMIT_* here: the defaults (burst 20) are in force.
  strict = await openSite({});
});

afterEach(() => stopAgentProcesses(running));

afterAll(async () => {
  await roomy?.server.close();
  await strict?.server.close();
  lab?.cleanup();
  await fake?.cleanup();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe("Appium sessions on a fleet of devices", () => {
  it("runs three sessions on two devices: two start on different devices, the third waits for the first freed one", async () => {
    const agent = startAgent(roomy, "fleet-two");
    const started: WebdriverIO.Browser[] = [];
    const requests = ["first", "second", "third"].map((name) =>
      newSession(roomy, agent, name).then((browser) => {
        started.push(browser);
        return browser;
      }),
    );
    // A failure below must not leave the waiting request's rejection unhandled.
    for (const request of requests) request.catch(() => undefined);
    // Whichever two the agent reserved first.
    await waitFor("two sessions to start", async () => started.length >= 2, 90_000);
    const [one, two] = started as [WebdriverIO.Browser, WebdriverIO.Browser];
    // The fake driver does not echo appium:udid in the capabilities it returns: the executions say the device.
    const udids = [await deviceOf(roomy, one.sessionId), await deviceOf(roomy, two.sessionId)];
    expect(new Set(udids).size, JSON.stringify(udids)).toBe(2);
    expect(udids.every((udid) => DEVICES.some((d) => d.serial === udid))).toBe(true);

    // The third is a queued execution while both devices are busy, and does not start while they stay so.
    const queued = await waitFor("the third session's queued execution", async () => {
      const items = (await call(`${roomy.server.baseUrl}/executions`, { headers: roomy.ci })).body.items as {
        id: string;
        kind: string;
        status: string;
      }[];
      const found = items.filter((e) => e.kind === "session" && e.status === "queued");
      return found.length > 0 && found;
    });
    expect(queued).toHaveLength(1);
    const waitingId = (queued[0] as { id: string }).id;
    const waiting = await execution(roomy, waitingId);
    expect(waiting).toMatchObject({ kind: "session", status: "queued" });
    // API.md (executions) gives a waiting_reason only when no connected agent could take it; this one is busy.
    expect(waiting).toHaveProperty("waiting_reason");
    expect(started).toHaveLength(2);
    expect(await one.getPageSource()).toContain("Espresso beans");

    // Ending the first frees its device for the third.
    const freed = udids[0];
    await one.deleteSession();
    await Promise.all(requests);
    const third = started[2] as WebdriverIO.Browser;
    expect(third.sessionId).toBe(waitingId);
    // Never two sessions on one device: the third holds the freed one, not the one still in use.
    expect(await deviceOf(roomy, third.sessionId)).toBe(freed);
    expect(await third.getPageSource()).toContain("Espresso beans");
    expect(await two.getPageSource()).toContain("Espresso beans");

    await two.deleteSession();
    await third.deleteSession();
    for (const browser of [one, two, third]) {
      expect((await finished(roomy, browser.sessionId)).status, agent.output()).toBe("passed");
      // The agent gave each session's Appium its own device as appium:udid (its log shows the capabilities).
      const appiumLog = await artifactText(roomy, browser.sessionId, "appium.log");
      const udid = await deviceOf(roomy, browser.sessionId);
      const other = DEVICES.find((d) => d.serial !== udid)?.serial as string;
      expect(appiumLog).toContain(udid);
      expect(appiumLog).not.toContain(other);
    }
  }, 180_000);

  it("loses the sessions of an agent killed outright: invalid session id, its run errored, its Appium stopped", async () => {
    const busyPorts = async () => {
      const busy: number[] = [];
      for (const port of BLOCK_PORTS) if (!(await isPortFree(port))) busy.push(port);
      return busy;
    };
    const before = await busyPorts();
    const agent = startAgent(roomy, "fleet-killed");
    const browser = await newSession(roomy, agent, "killed");
    const id = browser.sessionId;
    expect(await browser.getPageSource()).toContain("Espresso beans");
    // The session's Appium: the block it took in the agent's range.
    const appiumPorts = (await busyPorts()).filter((port) => !before.includes(port));
    expect(appiumPorts).toHaveLength(1);

    agent.child.kill("SIGKILL");
    await agent.exited;
    // No code of the agent ran: its watchdog stopped the Appium it started.
    await waitFor("the watchdog to stop Appium", async () => isPortFree(appiumPorts[0] as number), 30_000);

    // The command waits out the channel's grace, then is told the session is lost.
    await expect(browser.getPageSource()).rejects.toThrow(/lost/);
    const after = await fetch(`${roomy.server.origin}/wd/hub/session/${id}/source`, { headers: roomy.ci });
    expect(after.status).toBe(404);
    const body = (await after.json()) as { value: { error: string; message: string } };
    expect(body.value.error).toBe("invalid session id");
    expect(body.value.message).toMatch(/agent_lost|session is lost/);

    // Its lease lapses (the test server's clock moves only when told: past the 6 s TTL, and the sweep finds it):
    // an infrastructure error, not a failed test.
    roomy.server.clock.advance(7000);
    const done = await finished(roomy, id).catch(async (error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(await execution(roomy, id))}`);
    });
    expect(done.status).toBe("errored");
  }, 180_000);

  it("never rate-limits a session's commands: 200 in a row are all answered, with the client's burst of 20", async () => {
    const agent = startAgent(strict, "fleet-strict");
    const browser = await newSession(strict, agent, "busy");
    const id = browser.sessionId;
    const statuses: number[] = [];
    const { origin } = strict.server;
    // Raw requests, so that each status is seen (webdriverio would retry or throw on some).
    for (let n = 0; n < 200; n++) {
      const answer = await fetch(`${origin}/wd/hub/session/${id}/source`);
      statuses.push(answer.status);
      await answer.arrayBuffer();
    }
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    // And the client's own commands after them.
    expect(await browser.getPageSource()).toContain("Espresso beans");
    await browser.deleteSession();
    expect((await finishedOnStrict(agent, id))?.status, agent.output()).toBe("passed");
  }, 180_000);

  it("answers setSessionStatus itself, and the client's failed stands over the DELETE's passed", async () => {
    const agent = startAgent(roomy, "fleet-status");
    const browser = await newSession(roomy, agent, "status");
    const id = browser.sessionId;
    expect(await browser.getPageSource()).toContain("Espresso beans");
    const answer = await browser.execute(
      'testbay: {"action": "setSessionStatus", "status": "failed", "reason": "cart total"}',
    );
    expect(answer).toBeNull();
    await browser.deleteSession();
    const done = await finished(roomy, id);
    expect(done.status, agent.output()).toBe("failed");

    // Appium never saw it: neither the relayed commands nor Appium's log name it.
    const commands = await artifactText(roomy, id, "commands.jsonl");
    expect(commands).toContain('"/source"');
    expect(commands).not.toContain("setSessionStatus");
    const appiumLog = await artifactText(roomy, id, "appium.log");
    expect(appiumLog).toContain("Fake");
    expect(appiumLog).not.toContain("setSessionStatus");
  }, 180_000);
});
