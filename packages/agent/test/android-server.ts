/**
 * What the Android end-to-end tests share: a real test server with the basic app and its test APK uploaded, a ci
 * token, an agent client, and real `testbay-agent` processes on stand-in devices, stopped (with their device
 * lab cleaned up) after each test. Call `androidServer()` at the top of a test file: it registers the hooks.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import {
  call,
  registerBasicApp,
  startTestServer,
  type TestServer,
  uploadBasicTestPackage,
} from "../../server/test/harness.ts";
import { type AgentProcess, startAgentProcess, stopAgentProcesses, waitFor } from "./agent-process.ts";
import { createDeviceLab, type DeviceLab } from "./stand-ins/device-lab.ts";

/** A response body as the tests read it, field by field. */
type Body = Awaited<ReturnType<typeof call>>["body"];

export interface AndroidServer {
  readonly server: TestServer;
  /** Headers of the ci client: `{ "x-api-key": token }`. */
  readonly ci: Record<string, string>;
  /** A device lab (stand-in devices), cleaned up after the test. */
  createLab(options: Parameters<typeof createDeviceLab>[0]): Promise<DeviceLab>;
  /** A `testbay-agent --devices auto` (plus `args`) on the lab whose environment is `labEnv`. */
  startAgent(name: string, labEnv: Record<string, string>, args?: string[]): AgentProcess;
  /** Creates a plan for a Pixel 7 with this one instrumentation step and triggers it; the execution ID. */
  triggerInstrumentation(version: string, step?: Record<string, unknown>): Promise<string>;
  /** The same with any one step (its `type` included). */
  triggerStep(version: string, step: { type: string } & Record<string, unknown>): Promise<string>;
  /** GET /executions/{id}. */
  execution(id: string): Promise<Body>;
  /** The execution once it has ended. */
  finished(id: string): Promise<Body>;
}

export function androidServer(options: { versions?: string[] } = {}): AndroidServer {
  const versions = options.versions ?? ["1.0.0"];
  const running: ChildProcess[] = [];
  let agentCredentials: { client_id: string; client_secret: string };
  let scratch: string;
  const state = {
    server: undefined as unknown as TestServer,
    ci: {} as Record<string, string>,
    lab: undefined as DeviceLab | undefined,
  };

  beforeAll(async () => {
    state.server = await startTestServer({
      env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
    });
    scratch = await mkdtemp(path.join(tmpdir(), "testbay-android-"));
    state.ci = { "x-api-key": await state.server.token(await state.server.createClient("acme", "ci")) };
    agentCredentials = await state.server.createClient("acme", "agent");
    for (const version of versions) {
      await registerBasicApp(state.server, state.ci, version);
      await uploadBasicTestPackage(state.server, state.ci, version);
    }
  });

  afterEach(async () => {
    await stopAgentProcesses(running);
    state.lab?.cleanup();
    state.lab = undefined;
  });

  afterAll(async () => {
    await state.server.close();
    await rm(scratch, { recursive: true, force: true });
  });

  const execution = async (id: string) =>
    (await call(`${state.server.baseUrl}/executions/${id}`, { headers: state.ci })).body;

  const triggerStep = async (version: string, step: { type: string } & Record<string, unknown>) => {
    const plan = await call(`${state.server.baseUrl}/testplans`, {
      headers: state.ci,
      json: {
        name: `android ${version} ${Math.random()}`,
        package_name: "com.example.basic",
        devices: [{ platform: "android", model: "Pixel 7" }],
        steps: [step],
      },
    });
    expect(plan.status).toBe(201);
    const run = await call(`${state.server.baseUrl}/testplan/run`, {
      headers: state.ci,
      json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version },
    });
    expect(run.status).toBe(200);
    return run.body.execution.id as string;
  };

  return {
    get server() {
      return state.server;
    },
    get ci() {
      return state.ci;
    },
    async createLab(options) {
      state.lab?.cleanup();
      state.lab = await createDeviceLab(options);
      return state.lab;
    },
    startAgent(name, labEnv, args = []) {
      return startAgentProcess({
        name,
        baseUrl: state.server.baseUrl,
        audience: state.server.config.audience,
        credentials: agentCredentials,
        scratch,
        args: ["--devices", "auto", ...args],
        env: labEnv,
        running,
      });
    },
    triggerInstrumentation: (version, step = {}) =>
      triggerStep(version, { type: "instrumentation", ...step }),
    triggerStep,
    execution,
    finished: (id) =>
      waitFor(`execution ${id} to finish`, async () => {
        const view = await execution(id);
        return !["queued", "running"].includes(view.status) && view;
      }),
  };
}
