/**
 * What the two files about one `testbay-agent --appium` share (agent-appium.int.test.ts: the relay, on SQLite and
 * on the scaled set; agent-appium-host.int.test.ts: what the agent does on its host, on SQLite): a real server on
 * a port, Appium's fake driver in a test APPIUM_HOME (fake-driver-home.ts), the stand-in Android lab's one device,
 * real agent processes (bin/testbay-agent.js, as an operator starts them) and real `webdriverio` clients at
 * `/wd/hub`. The fake driver's platformName is "Fake": `testbay:options.platform` picks the device for it.
 * `useAppiumAgentSite` registers the file's hooks: a server and a lab for the file, its agents stopped after each
 * test.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import { remote } from "webdriverio";
import type { IssuedCredentials } from "../../../server/src/features/clients/index.ts";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../server/test/harness.ts";
import { type AgentProcess, startAgentProcess, stopAgentProcesses, waitFor } from "../agent-process.ts";
import { createDeviceLab, type DeviceLab } from "../stand-ins/device-lab.ts";
import { FAKE_APP, type FakeDriverHome, fakeDriverAgentArgs, installFakeDriver } from "./fake-driver-home.ts";

export const SERIAL = "emulator-5554";
export const PIXEL = { serial: SERIAL, model: "Pixel 7", release: "14", sdk: 34 };

export interface AppiumAgentSite {
  server: TestServer;
  ci: Record<string, string>;
  lab: DeviceLab;
  /** An agent with the fake driver on the lab's device (and `labEnv`'s tools), in the file's port range. */
  startAgent(
    name: string,
    extraArgs?: string[],
    allowLocalApps?: boolean,
    labEnv?: Record<string, string>,
  ): AgentProcess;
  /** A webdriverio session at Testbay's `/wd/hub` with the ci client's ID and secret (HTTP Basic). */
  newSession(agent: AgentProcess, capabilities?: WebdriverIO.Capabilities): Promise<WebdriverIO.Browser>;
  execution(id: string): Promise<Record<string, unknown> & { status: string }>;
  /** The execution once it is neither queued nor running. */
  finished(id: string): Promise<Record<string, unknown> & { status: string }>;
  artifactText(id: string, name: string): Promise<string>;
}

/** The fake driver's capabilities, on the lab's Android device (testbay:options.platform). */
export const fakeOnAndroid = (options: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  ({
    platformName: "Fake",
    "appium:automationName": "Fake",
    "appium:app": FAKE_APP,
    "testbay:options": { platform: "android", name: "fake shop", queue_timeout_seconds: 120, ...options },
    ...extra,
  }) as WebdriverIO.Capabilities;

/**
 * Registers the file's hooks and answers its site, filled in once beforeAll has run. `ports` (`FROM-TO`) is the
 * file's own range, apart from the other Appium suites' so that they may run at once.
 */
export function useAppiumAgentSite(ports: string): AppiumAgentSite {
  let ciCredentials: IssuedCredentials;
  let agentCredentials: { client_id: string; client_secret: string };
  let scratch: string;
  let fake: FakeDriverHome;
  const running: ChildProcess[] = [];
  const site = {} as AppiumAgentSite;

  beforeAll(async () => {
    const server = await startTestServer({
      env: {
        TESTBAY_RATE_LIMIT_BURST: "100000",
        TESTBAY_AGENT_RATE_LIMIT_BURST: "100000",
        // Heartbeats every 2 s, which is how the agent hears of a cancel.
        TESTBAY_LEASE_TTL_SECONDS: "6",
      },
    });
    scratch = await mkdtemp(path.join(tmpdir(), "testbay-agent-appium-"));
    ciCredentials = await server.createClient("acme", "ci");
    const ci = { "x-api-key": await server.token(ciCredentials) };
    agentCredentials = await server.createClient("acme", "agent");
    await registerBasicApp(server, ci, "1.0.0");
    fake = await installFakeDriver();
    const lab = await createDeviceLab({ devices: [PIXEL], timeScale: 0.05 });
    const execution = async (id: string) =>
      (await call(`${server.baseUrl}/executions/${id}`, { headers: ci })).body;
    Object.assign(site, {
      server,
      ci,
      lab,
      execution,
      finished: (id: string) =>
        waitFor(`execution ${id} to end`, async () => {
          const view = await execution(id);
          return !["queued", "running"].includes(view.status) && view;
        }),
      artifactText: async (id: string, name: string) =>
        (await fetch(`${server.baseUrl}/executions/${id}/artifacts/${name}`, { headers: ci })).text(),
      startAgent: (name: string, extraArgs: string[] = [], allowLocalApps = true, labEnv = lab.env) =>
        startAgentProcess({
          name,
          baseUrl: server.baseUrl,
          audience: server.config.audience,
          credentials: agentCredentials,
          scratch,
          args: [...fakeDriverAgentArgs(ports, { allowLocalApps }), ...extraArgs],
          env: { ...labEnv, APPIUM_HOME: fake.home },
          running,
        }),
      newSession: (agent: AgentProcess, capabilities = fakeOnAndroid()) => {
        const { port } = new URL(server.origin);
        return remote({
          hostname: "127.0.0.1",
          port: Number(port),
          path: "/wd/hub",
          protocol: "http",
          user: ciCredentials.client_id,
          key: ciCredentials.client_secret,
          logLevel: "silent",
          connectionRetryCount: 0,
          connectionRetryTimeout: 180_000,
          capabilities,
        }).catch((error: Error) => {
          throw new Error(`${error.message}\nagent said:\n${agent.output()}`);
        });
      },
    } satisfies AppiumAgentSite);
  });

  afterEach(() => stopAgentProcesses(running));

  afterAll(async () => {
    await site.server?.close();
    site.lab?.cleanup();
    await fake?.cleanup();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  return site;
}
