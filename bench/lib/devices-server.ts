// The server the devices benchmark runs against: one Testbay process as `testbay-server start` builds it
// (bench/servers/webhooks-instance.ts, SQLite, the real clock: the device runs' started_at and finished_at are
// what the benchmark reads), the basic app and its test package uploaded, and an agent that stops gracefully.

import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { startAgentProcess, stopAgentProcesses } from "../../packages/agent/test/agent-process.ts";
import {
  call,
  registerBasicApp,
  type TestServer,
  uploadBasicTestPackage,
} from "../../packages/server/test/harness.ts";
import type { CleanupScope } from "./cleanup.ts";
import { unlimited } from "./opening.ts";
import { startTestbayInstances } from "./testbay-instances.ts";

export const APP_VERSION = "1.0.0";

export interface DevicesServer {
  /** `http://127.0.0.1:PORT/v1` */
  baseUrl: string;
  audience: string;
  /** `{ "x-api-key": token }` of the ci client. */
  ci: Record<string, string>;
  agentCredentials: { client_id: string; client_secret: string };
}

export async function startDevicesServer(
  dir: string,
  scope: CleanupScope,
  log: (line: string) => void,
): Promise<DevicesServer> {
  const [instance] = await startTestbayInstances({
    bench: "devices",
    setup: "embedded",
    count: 1,
    env: {
      TESTBAY_DATA_DIR: path.join(dir, "data"),
      TESTBAY_HOST: "127.0.0.1",
      TESTBAY_LOG_LEVEL: "warn",
      TESTBAY_LOCAL_AGENT: "false",
      TESTBAY_RATE_LIMIT_BURST: unlimited,
      TESTBAY_RATE_LIMIT_PER_SECOND: unlimited,
      TESTBAY_AGENT_RATE_LIMIT_BURST: unlimited,
      TESTBAY_AGENT_RATE_LIMIT_PER_SECOND: unlimited,
    },
    dir,
    scope,
    log,
  });
  const ready = instance?.ready;
  if (!ready?.clients) throw new Error("the server sent no clients");
  const baseUrl = `http://127.0.0.1:${ready.port}/v1`;
  const token = await call(`${baseUrl}/oauth/token`, {
    json: { ...ready.clients.ci, audience: ready.audience },
  });
  if (token.status !== 200) throw new Error(`ci token: ${token.status} ${JSON.stringify(token.body)}`);
  const ci = { "x-api-key": token.body.access_token as string };
  // The harness's upload helpers take a TestServer and read only its baseUrl.
  const asHarness = { baseUrl } as TestServer;
  await registerBasicApp(asHarness, ci, APP_VERSION);
  await uploadBasicTestPackage(asHarness, ci, APP_VERSION);
  return { baseUrl, audience: ready.audience, ci, agentCredentials: ready.clients.agent };
}

/**
 * A `testbay-agent` process on a device lab. It is stopped with SIGTERM first, so that it stops the emulators it
 * started, then SIGKILL if it has not exited within 20 s; both when `scope` closes, or earlier by `stop()`.
 */
export function startBenchAgent(
  server: DevicesServer,
  options: { name: string; scratch: string; args: string[]; env: Record<string, string> },
  scope: CleanupScope,
) {
  const running: ChildProcess[] = [];
  const agent = startAgentProcess({
    name: options.name,
    baseUrl: server.baseUrl,
    audience: server.audience,
    credentials: server.agentCredentials,
    scratch: options.scratch,
    args: options.args,
    env: options.env,
    running,
  });
  const stop = async () => {
    if (agent.child.exitCode === null && agent.child.signalCode === null) {
      agent.child.kill("SIGTERM");
      await Promise.race([agent.exited, delay(20_000)]);
    }
    await stopAgentProcesses(running);
  };
  scope.defer(stop);
  return { ...agent, stop };
}

export interface ListedDevice {
  serial: string;
  state?: string;
}

/** The agent's devices as GET /agents shows them (what its last claim offered). */
export async function agentDevices(server: DevicesServer, name: string): Promise<ListedDevice[]> {
  const body = (await call(`${server.baseUrl}/agents`, { headers: server.ci })).body as {
    items: Array<{ name: string; devices: ListedDevice[] }>;
  };
  return body.items.find((a) => a.name === name)?.devices ?? [];
}

/** Polls `check` every 100 ms until it returns something truthy; throws, naming `what`, after `limitMs`. */
export async function waitUntil<T>(
  what: string,
  limitMs: number,
  check: () => Promise<T | undefined | false>,
  context: () => string = () => "",
): Promise<T> {
  const deadline = performance.now() + limitMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (performance.now() > deadline) {
      throw new Error(`${what}: not within ${limitMs / 1000} s${context() ? `\n${context()}` : ""}`);
    }
    await delay(100);
  }
}
