/**
 * The `appium` step from a job's step to the session's end, against the real `appium` with Appium's fake driver:
 * what it reports (ready with Appium's capabilities, or failed with why), the relay it hands to the command source,
 * two sessions side by side on their own ports, and the refusals of apps that are not Testbay's to fetch. The
 * server calls are injected, as the agent's channel and `POST /v1/agent/jobs/{lease}/session` will be.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { SessionEndReason } from "../../src/appium/appium-session.ts";
import {
  type AppiumAgentOptions,
  type AppiumStep,
  type AppiumStepResult,
  type Relay,
  runAppiumStep,
  type SessionReadiness,
} from "../../src/appium/appium-step.ts";
import { PortBlocks } from "../../src/appium/port-blocks.ts";
import {
  APPIUM_EXECUTABLE,
  FAKE_APP,
  FAKE_CAPABILITIES,
  type FakeDriverHome,
  installFakeDriver,
} from "./fake-driver-home.ts";

const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

let fake: FakeDriverHome;
let root: string;
let agent: AppiumAgentOptions;

beforeAll(async () => {
  fake = await installFakeDriver();
  root = await mkdtemp(join(tmpdir(), "testbay-appium-step-"));
  agent = {
    executable: APPIUM_EXECUTABLE,
    allowLocalApps: false,
    allowPrivateAppUrls: false,
    // Its own range, below Linux's ephemeral ports (32768–60999) that outgoing connections take.
    portBlocks: new PortBlocks({ from: 24930, to: 25029 }),
    env: fake.env,
    // No DNS on the test machines: the one name the tests use resolves to a private address.
    resolveAll: async (host) => {
      if (host === "apps.lab.example") return [{ address: "10.20.30.40" }];
      throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
    },
  };
});

/** Runs a failed test left open: stopped as the agent's shutdown would, so that no Appium outlives the test. */
const started: Array<{ abort(reason: string): void; result: Promise<AppiumStepResult> }> = [];

afterEach(async () => {
  const runs = started.splice(0);
  for (const run of runs) run.abort("shutdown");
  await Promise.all(runs.map((run) => run.result));
});

afterAll(async () => {
  await fake?.cleanup();
  if (root) await rm(root, { recursive: true, force: true });
});

/** A session run with recording stand-ins for the server: what was reported, the relay, the agent's own ends. */
function startStep(
  name: string,
  step: AppiumStep,
  options: {
    installedAppPath?: string | null;
    agent?: Partial<AppiumAgentOptions>;
    /** The session's state the server answers the report with (`agent.reportSession`). */
    serverState?: string;
  } = {},
) {
  const detachedWith: SessionEndReason[] = [];
  const abort = new AbortController();
  const reports: SessionReadiness[] = [];
  const endedByAgent: SessionEndReason[] = [];
  const logs: string[] = [];
  let relay: Relay | null = null;
  let resolveReady: (readiness: SessionReadiness) => void = () => {};
  const reported = new Promise<SessionReadiness>((resolve) => {
    resolveReady = resolve;
  });
  const result: Promise<AppiumStepResult> = runAppiumStep(
    {
      step,
      device: { serial: `fake-${name}`, platform: "android" },
      installedAppPath: options.installedAppPath === undefined ? FAKE_APP : options.installedAppPath,
      dir: join(root, name),
      agent: { ...agent, ...options.agent },
    },
    {
      reportReady: async (readiness) => {
        reports.push(readiness);
        resolveReady(readiness);
        return options.serverState ? { state: options.serverState } : undefined;
      },
      serveCommands: (given) => {
        relay = given.relay;
        return (reason) => {
          relay = null;
          detachedWith.push(reason);
        };
      },
      onEnded: (reason) => endedByAgent.push(reason),
      signal: abort.signal,
      log: (line) => logs.push(line),
    },
  );
  started.push({ abort: (reason) => abort.abort(reason), result });
  return {
    result,
    reported,
    reports,
    endedByAgent,
    detachedWith,
    logs,
    abort: (reason: string) => abort.abort(reason),
    send(command: Parameters<Relay>[0]) {
      if (!relay) throw new Error("no relay is being served");
      return relay(command);
    },
  };
}

const fakeStep = (capabilities: Record<string, unknown> = FAKE_CAPABILITIES, options = {}): AppiumStep => ({
  type: "appium",
  capabilities,
  options,
});

async function clickAddToCart(session: ReturnType<typeof startStep>, times: number): Promise<string> {
  const found = await session.send({
    method: "POST",
    path: "/element",
    body: { using: "id", value: "add-to-cart" },
  });
  const id = (found.body as { value: Record<string, string> }).value[ELEMENT] as string;
  for (let i = 0; i < times; i++)
    await session.send({ method: "POST", path: `/element/${id}/click`, body: {} });
  const clicks = await session.send({ method: "GET", path: `/element/${id}/attribute/clicks` });
  return (clicks.body as { value: string }).value;
}

describe("runAppiumStep", () => {
  it("runs two sessions side by side, each on its own Appium and ports, both passed after DELETE", async () => {
    const clientCapabilities = {
      ...FAKE_CAPABILITIES,
      "appium:udid": "not-yours",
      "appium:systemPort": 8200,
    };
    const a = startStep("side-a", fakeStep(clientCapabilities));
    const b = startStep("side-b", fakeStep(clientCapabilities));
    const [readyA, readyB] = await Promise.all([a.reported, b.reported]);
    expect(readyA.status).toBe("ready");
    expect(readyB.status).toBe("ready");
    const capsA = (readyA as Extract<SessionReadiness, { status: "ready" }>).capabilities;
    const capsB = (readyB as Extract<SessionReadiness, { status: "ready" }>).capabilities;
    expect(capsA).toMatchObject({ udid: "fake-side-a", app: FAKE_APP });
    expect(capsB).toMatchObject({ udid: "fake-side-b", app: FAKE_APP });
    expect(capsA.systemPort).not.toBe(8200);
    expect(capsA.systemPort).not.toBe(capsB.systemPort);
    expect(a.logs.join("\n")).toContain("instead of the client's: appium:udid, appium:systemPort");

    // Interleaved commands reach their own session's app.
    const [clicksA, clicksB] = await Promise.all([clickAddToCart(a, 2), clickAddToCart(b, 1)]);
    expect([clicksA, clicksB]).toEqual(["2", "1"]);

    expect((await a.send({ method: "DELETE", path: "" })).status).toBe(200);
    expect((await b.send({ method: "DELETE", path: "" })).status).toBe(200);
    const [resultA, resultB] = await Promise.all([a.result, b.result]);
    for (const result of [resultA, resultB]) {
      expect(result.reason).toBe("deleted");
      expect(result.outcome).toEqual({ status: "passed", message: null });
      expect(result.files.map((f) => f.split("/").pop())).toEqual(["appium.log", "commands.jsonl"]);
      for (const file of result.files) expect(existsSync(file)).toBe(true);
    }
    // A DELETE is the client's own end: nothing for the agent to announce.
    expect([...a.endedByAgent, ...b.endedByAgent]).toEqual([]);
    expect([...a.detachedWith, ...b.detachedWith]).toEqual(["deleted", "deleted"]);
    expect(a.reports).toHaveLength(1);
  });

  it("ends by itself after the idle timeout, tells the command source, and errs", async () => {
    const run = startStep("idle", fakeStep(FAKE_CAPABILITIES, { idle_timeout_seconds: 1 }));
    expect((await run.reported).status).toBe("ready");
    const result = await run.result;
    expect(result.reason).toBe("idle_timeout");
    expect(result.outcome).toEqual({ status: "errored", message: "the session ended: idle_timeout" });
    expect(run.endedByAgent).toEqual(["idle_timeout"]);
  });

  it("ends the session when the server answers the ready report with another state (the client hung up)", async () => {
    const run = startStep("hung-up", fakeStep(), { serverState: "ended" });
    const result = await run.result;
    expect(result.reason).toBe("cancelled");
    expect(run.detachedWith).toEqual(["cancelled"]);
    expect(run.logs).toContain("the server has the session ended: ending it");
  });

  it("ends on cancel as cancelled", async () => {
    const run = startStep("cancel", fakeStep());
    expect((await run.reported).status).toBe("ready");
    run.abort("cancelled");
    const result = await run.result;
    expect(result.reason).toBe("cancelled");
    expect(result.outcome.status).toBe("cancelled");
    expect(run.endedByAgent).toEqual([]);
  });

  it("refuses a local appium:app path without --appium-allow-local-apps, takes it with", async () => {
    const local = fakeStep({ ...FAKE_CAPABILITIES, "appium:app": FAKE_APP });
    const refused = startStep("local-refused", local, { installedAppPath: null });
    const result = await refused.result;
    expect(refused.reports).toEqual([
      {
        status: "failed",
        error: "session not created",
        message: expect.stringContaining("--appium-allow-local-apps"),
      },
    ]);
    expect(result).toMatchObject({ reason: null, files: [], outcome: { status: "errored" } });

    const allowed = startStep("local-allowed", local, {
      installedAppPath: null,
      agent: { allowLocalApps: true },
    });
    expect(await allowed.reported).toMatchObject({ status: "ready", capabilities: { app: FAKE_APP } });
    await allowed.send({ method: "DELETE", path: "" });
    expect((await allowed.result).reason).toBe("deleted");
  });

  it.each([
    ["http://127.0.0.1:9/app.xml", "127.0.0.1 is a loopback address"],
    ["https://apps.lab.example/app.xml", "apps.lab.example resolves to 10.20.30.40, a private address"],
  ])("refuses the app URL %s before starting Appium", async (url, why) => {
    const run = startStep("private-url", fakeStep({ ...FAKE_CAPABILITIES, "appium:app": url }), {
      installedAppPath: null,
    });
    const result = await run.result;
    expect(run.reports).toHaveLength(1);
    expect(run.reports[0]).toMatchObject({ status: "failed", error: "session not created" });
    const message = (run.reports[0] as { message: string }).message;
    expect(message).toContain(why);
    expect(message).toContain("--appium-allow-private-app-urls");
    expect(result.files).toEqual([]);
  });

  it("reports Appium's own refusal as failed and keeps Appium's log", async () => {
    // No app at all: the fake driver's capabilities say one is required.
    const run = startStep("no-app", fakeStep(), { installedAppPath: null });
    const result = await run.result;
    expect(run.reports[0]).toMatchObject({ status: "failed", error: "session not created" });
    expect(result.files.map((f) => f.split("/").pop())).toEqual(["appium.log"]);
  });
});
