/**
 * What the iOS end-to-end tests share: a real test server with an iOS app registered and version 1.0.0 uploaded
 * (what each file uploads is its own: an IPA and a test package, or a zipped .app), a ci token, and real
 * `testbay-agent --devices auto` processes on an Apple lab of stand-in simulators, stopped (with the lab cleaned
 * up) after each test. Call `iosServer()` at the top of a test file: it registers the hooks.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { call, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { type AgentProcess, startAgentProcess, stopAgentProcesses, waitFor } from "./agent-process.ts";
import {
  type AppleLab,
  type AppleLabOptions,
  createAppleLab,
  type SimulatorSpec,
} from "./stand-ins/apple-lab.ts";
import { createDeviceLab, type DeviceLab } from "./stand-ins/device-lab.ts";

/** A response body as the tests read it, field by field. */
type Body = Awaited<ReturnType<typeof call>>["body"];

export const IOS_APP = "com.example.shop";

/** A stand-in iPhone 15 simulator on iOS 17.5. */
export const iPhone15 = (udid: string, state: "Shutdown" | "Booted" = "Shutdown"): SimulatorSpec => ({
  udid,
  name: "iPhone 15",
  runtime: "com.apple.CoreSimulator.SimRuntime.iOS-17-5",
  state,
});

/** Files to upload as version 1.0.0: the app (an IPA or a zipped .app) and, if any, its test package. */
export interface IosUploads {
  app: string;
  testPackage?: string;
}

export interface IosServer {
  readonly server: TestServer;
  /** Headers of the ci client: `{ "x-api-key": token }`. */
  readonly ci: Record<string, string>;
  /** An Apple lab (and an adb with no devices beside it, as on a Mac that has one), cleaned up after the test. */
  createLab(options: AppleLabOptions): Promise<AppleLab>;
  /** A `testbay-agent --devices auto` (plus `args`) on the lab. */
  startAgent(name: string, args?: string[]): AgentProcess;
  /**
   * Uploads another version of the app (files made in the scratch folder), and its test package if given;
   * the test package as the server answered (null without one).
   */
  uploadVersion(version: string, files: (scratch: string) => IosUploads): Promise<Body | null>;
  /** Creates a plan with this one step on `device` and triggers it on `version` (1.0.0); the execution ID. */
  trigger(
    step: { type: string } & Record<string, unknown>,
    options?: { max_attempts?: number; device?: Record<string, string>; version?: string },
  ): Promise<string>;
  /** GET /executions/{id}. */
  execution(id: string): Promise<Body>;
  /** The execution once it has ended (the agent's output printed if it never does). */
  finished(id: string, agent: AgentProcess): Promise<Body>;
}

export function iosServer(uploads: (scratch: string) => IosUploads): IosServer {
  const running: ChildProcess[] = [];
  let agentCredentials: { client_id: string; client_secret: string };
  let scratch: string;
  const state = {
    server: undefined as unknown as TestServer,
    ci: {} as Record<string, string>,
    lab: undefined as AppleLab | undefined,
    noAndroid: undefined as DeviceLab | undefined,
  };

  const upload = async (version: string, route: string, file: string): Promise<Body> => {
    const uploaded = await fetch(`${state.server.baseUrl}/apps/${IOS_APP}/versions/${version}${route}`, {
      method: "PUT",
      headers: { ...state.ci, "content-type": "application/octet-stream" },
      body: await readFile(file),
    });
    const text = await uploaded.text();
    expect(uploaded.status, text).toBe(201);
    return JSON.parse(text);
  };
  const uploadVersion = async (version: string, files: IosUploads) => {
    await upload(version, "", files.app);
    return files.testPackage ? upload(version, "/test-package", files.testPackage) : null;
  };

  beforeAll(async () => {
    state.server = await startTestServer({
      env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
    });
    scratch = await mkdtemp(path.join(tmpdir(), "testbay-ios-"));
    state.ci = { "x-api-key": await state.server.token(await state.server.createClient("acme", "ci")) };
    agentCredentials = await state.server.createClient("acme", "agent");
    const created = await call(`${state.server.baseUrl}/apps`, {
      headers: state.ci,
      json: { package_name: IOS_APP, platform: "ios", display_name: "Shop" },
    });
    expect(created.status).toBe(201);
    await uploadVersion("1.0.0", uploads(scratch));
  });

  afterEach(async () => {
    await stopAgentProcesses(running);
    state.lab?.cleanup();
    state.lab = undefined;
    state.noAndroid?.cleanup();
    state.noAndroid = undefined;
  });

  afterAll(async () => {
    await state.server.close();
    await rm(scratch, { recursive: true, force: true });
  });

  const execution = async (id: string) =>
    (await call(`${state.server.baseUrl}/executions/${id}`, { headers: state.ci })).body;

  return {
    get server() {
      return state.server;
    },
    get ci() {
      return state.ci;
    },
    async createLab(options) {
      state.lab = await createAppleLab({ timeScale: 0.02, ...options });
      // The stand-ins' folder holds adb too: an adb with no devices, as on a Mac that has one installed.
      state.noAndroid = await createDeviceLab({ devices: [] });
      return state.lab;
    },
    startAgent: (name, args = []) =>
      startAgentProcess({
        name,
        baseUrl: state.server.baseUrl,
        audience: state.server.config.audience,
        credentials: agentCredentials,
        scratch,
        args: ["--devices", "auto", ...args],
        env: { ...state.noAndroid?.env, ...state.lab?.env, PATH: state.lab?.env.PATH ?? "" },
        running,
      }),
    uploadVersion: (version, files) => uploadVersion(version, files(scratch)),
    async trigger(step, { device = { platform: "ios" }, version = "1.0.0", ...options } = {}) {
      const plan = await call(`${state.server.baseUrl}/testplans`, {
        headers: state.ci,
        json: {
          name: `ios ${step.type} ${Math.random()}`,
          package_name: IOS_APP,
          devices: [device],
          steps: [step],
          ...options,
        },
      });
      expect(plan.status, JSON.stringify(plan.body)).toBe(201);
      const run = await call(`${state.server.baseUrl}/testplan/run`, {
        headers: state.ci,
        json: { test_plan_id: plan.body.id, package_name: IOS_APP, version },
      });
      expect(run.status, JSON.stringify(run.body)).toBe(200);
      return run.body.execution.id as string;
    },
    execution,
    finished: (id, agent) =>
      waitFor(`execution ${id} to finish`, async () => {
        const view = await execution(id);
        return !["queued", "running"].includes(view.status) && view;
      }).catch(async (error) => {
        console.log(agent.output(), JSON.stringify(await execution(id), null, 1));
        throw error;
      }),
  };
}
