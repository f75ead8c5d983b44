/**
 * The agent's device watch against a real server: what GET /v1/agents shows follows the devices plugged
 * into and unplugged from the device lab while the agent runs, and a device drained by three device_lost
 * runs shows as drained. Jobs are ended by a stand-in job runner that reports device_lost, since no
 * device can really go away here.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Testbay } from "@testbay/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../../server/test/harness.ts";
import { createDeviceLab, type DeviceLab } from "../../test/stand-ins/device-lab.ts";
import { Agent } from "./agent.ts";

const apk = fileURLToPath(new URL("../../../server/test/fixtures/binaries/app-basic.apk", import.meta.url));
const app = "com.example.basic";

interface ListedDevice {
  serial: string;
  model: string;
  os_version: string;
  state: "idle" | "busy" | "drained";
}

let server: TestServer;
let lab: DeviceLab;
let dir: string;
let ci: Testbay;
let agent: Agent;
let ciToken: string;
const done: string[] = [];
const logs: string[] = [];

beforeAll(async () => {
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  dir = await mkdtemp(join(tmpdir(), "testbay-agent-devices-int-"));
  lab = await createDeviceLab({ devices: [{ serial: "emulator-5554", model: "Pixel 7", release: "14" }] });
  const ciCredentials = await server.createClient("acme", "ci");
  ciToken = await server.token(ciCredentials);
  ci = new Testbay({
    baseUrl: server.baseUrl,
    clientId: ciCredentials.client_id,
    clientSecret: ciCredentials.client_secret,
  });
  await ci.apps.create({ package_name: app, platform: "android" });
  await ci.versions.upload({ packageName: app, version: "1.0.0", file: apk });
  const agentCredentials = await server.createClient("acme", "agent");
  agent = new Agent({
    client: new Testbay({
      baseUrl: server.baseUrl,
      clientId: agentCredentials.client_id,
      clientSecret: agentCredentials.client_secret,
    }),
    name: "lab-host",
    allowShell: false,
    devices: "auto",
    concurrency: 1,
    workRoot: dir,
    cacheDir: join(dir, "cache"),
    log: (line) => logs.push(line),
    deviceRefreshMs: 100,
    env: { ...process.env, ...lab.env },
    runJob: async (job, options) => {
      await options.client.agent.complete(job.lease_id, { status: "errored", reason: "device_lost" });
      return { status: "errored", reason: "device_lost" };
    },
    onJobDone: (job) => done.push(job.execution_id),
  });
  await agent.start();
});

afterAll(async () => {
  await agent?.stop(0);
  await server?.close();
  lab?.cleanup();
  await rm(dir, { recursive: true, force: true });
});

async function listedDevices(): Promise<ListedDevice[]> {
  const response = await fetch(`${server.baseUrl}/agents`, { headers: { "x-api-key": ciToken } });
  const body = (await response.json()) as { items: { name: string; devices: ListedDevice[] }[] };
  return body.items.find((a) => a.name === "lab-host")?.devices ?? [];
}

/**
 * Polls GET /v1/agents (the server only learns of devices from claims) until `check` holds. Bounded generously:
 * three runs through the agent before a drain took over 15 s in a loaded CI run (a wait, not a limit asserted).
 */
async function devicesUntil(check: (devices: ListedDevice[]) => boolean, what: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const devices = await listedDevices();
    if (check(devices)) return devices;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(devices)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("the agent's devices as the server sees them", () => {
  it("follows plugging and unplugging without a restart, then shows a device drained", async () => {
    // With API.md §13's facts, read with the same getprop; a device the agent found is not managed.
    expect(await devicesUntil((d) => d.length === 1, "the first device")).toEqual([
      expect.objectContaining({
        serial: "emulator-5554",
        platform: "android",
        model: "Pixel 7",
        os_version: "14",
        state: "idle",
        api_level: 34,
        abi: "x86_64",
        emulator: true,
        managed: false,
      }),
    ]);

    lab.plug({ serial: "emulator-5556", model: "Pixel 8 Pro", release: "15" });
    const plugged = await devicesUntil(
      (d) => d.some((x) => x.serial === "emulator-5556"),
      "the plugged device",
    );
    expect(plugged).toContainEqual(
      expect.objectContaining({
        serial: "emulator-5556",
        platform: "android",
        model: "Pixel 8 Pro",
        os_version: "15",
        state: "idle",
      }),
    );

    lab.unplug("emulator-5554");
    expect(
      (
        await devicesUntil((d) => !d.some((x) => x.serial === "emulator-5554"), "the unplugged device gone")
      ).map((d) => d.serial),
    ).toEqual(["emulator-5556"]);

    const plan = await ci.testPlans.create({
      name: "on any Android device",
      package_name: app,
      devices: [{ platform: "android" }],
      steps: [{ type: "inspect", expect: { debuggable: false } }],
    });
    for (let i = 0; i < 3; i++) {
      await ci.triggers.run({ test_plan_id: plan.id, package_name: app, version: "1.0.0" });
    }
    const drained = await devicesUntil((d) => d.some((x) => x.state === "drained"), "the drained device");
    expect(drained).toEqual([
      expect.objectContaining({
        serial: "emulator-5556",
        platform: "android",
        model: "Pixel 8 Pro",
        os_version: "15",
        state: "drained",
        error: expect.stringContaining("3 infrastructure failures in a row"),
      }),
    ]);
    expect(done).toHaveLength(3);
    expect(logs).toContain(
      "device emulator-5556 drained after 3 infrastructure failures in a row; restart the agent to offer it again",
    );
  }, 180_000);
});
