import { describe, expect, it } from "vitest";
import { call } from "../../server/test/harness.ts";
import { waitFor } from "./agent-process.ts";
import { androidServer } from "./android-server.ts";

// Managed emulators end to end (issue 28, API.md §13): a real server, a real `testbay-agent --emulator` process
// and the emulator stand-in (stand-ins/emulator.mjs) on the adb lab. What the devices held is read from the lab.

const AVD = "Pixel_7_API_34";
const TEST_PACKAGE = "com.example.basic.test";
const android = androidServer();

const test = (durationMs: number) => ({
  tests: [
    {
      class: "com.example.basic.LoginTest",
      method: "signsIn",
      outcome: "pass" as const,
      duration_ms: durationMs,
    },
  ],
});

async function lab(durationMs = 400, avds = [{ name: AVD, model: "Pixel 7" }]) {
  return android.createLab({ avds, suites: { [TEST_PACKAGE]: test(durationMs) }, timeScale: 0.01 });
}

interface ListedDevice {
  serial: string;
  state: string;
  managed?: boolean;
  pool?: string | null;
  labels?: Record<string, string>;
  api_level?: number | null;
  emulator?: boolean;
  error?: string | null;
  boot_ms?: number | null;
}

/** The agent's devices as GET /agents shows them (what its last claim said). */
async function agentDevices(name: string): Promise<ListedDevice[]> {
  const body = (await call(`${android.server.baseUrl}/agents`, { headers: android.ci })).body as {
    items: Array<{ name: string; devices: ListedDevice[] }>;
  };
  return body.items.find((a) => a.name === name)?.devices ?? [];
}

const launchesOf = (l: Awaited<ReturnType<typeof lab>>, avd: string) =>
  l.emulatorLaunches().filter((e) => e.avd === avd);

describe("managed emulators (stand-in)", () => {
  it("--emulator AVD=3 boots three -read-only instances from a clean snapshot, runs six device runs each on a clean device, and SIGTERM stops them all", async () => {
    const l = await lab();
    const agent = android.startAgent("emu-1", l.env, ["--emulator", `${AVD}=3`, "--label", "team=payments"]);
    await waitFor(
      "three booted instances",
      async () => l.emulators().filter((e) => e.bootCompleted).length === 3,
    );
    const ids = [];
    for (let i = 0; i < 6; i++)
      ids.push(await android.triggerInstrumentation("1.0.0", { record_video: "never" }));
    for (const id of ids) expect((await android.finished(id)).status).toBe("passed");

    // The clean snapshot was made once, by one writable instance with its data wiped; the instances are read-only.
    const launches = launchesOf(l, AVD);
    expect(launches[0]?.argv).toContain("-wipe-data");
    expect(launches[0]?.argv).not.toContain("-read-only");
    expect(Object.keys(l.snapshots(AVD))).toEqual(["testbay-clean"]);
    expect(l.snapshots(AVD)["testbay-clean"]).toEqual({});
    for (const launch of launches.slice(1)) {
      expect(launch.argv).toEqual(
        expect.arrayContaining(["-read-only", "-snapshot", "testbay-clean", "-no-window"]),
      );
    }
    // Every run installed the app on a device that did not have it: nothing the previous run installed was left.
    const appInstalls = l.installLog().filter((i) => i.package === "com.example.basic");
    expect(appInstalls).toHaveLength(6);
    expect(appInstalls.filter((i) => i.alreadyInstalled)).toEqual([]);
    expect(new Set(appInstalls.map((i) => i.serial)).size).toBeGreaterThan(1);
    expect(agent.output()).toMatch(/device emulator-\d+ reset in \d+ ms/);
    // The reset before a run (a restart from the snapshot, for these -read-only instances) is its setup_ms: every
    // run but each device's first has one.
    const setups = [];
    for (const id of ids) {
      const view = (await call(`${android.server.baseUrl}/executions/${id}`, { headers: android.ci })).body;
      setups.push(...(view.devices as Array<{ setup_ms: number | null }>).map((d) => d.setup_ms));
    }
    const measured = setups.filter((ms): ms is number => typeof ms === "number");
    expect(measured.length).toBeGreaterThanOrEqual(6 - 3);
    for (const ms of measured) expect(ms).toBeGreaterThanOrEqual(0);
    // Each instance says how long its last boot took (the Agents page shows it).
    const listed = await waitFor("the three instances listed with their boot time", async () => {
      const managed = (await agentDevices("emu-1")).filter((d) => d.managed);
      return managed.length === 3 && managed.every((d) => typeof d.boot_ms === "number") && managed;
    });
    for (const device of listed) expect(device.boot_ms).toBeGreaterThan(0);

    // SIGTERM once the three are up again after their last reset: every emulator the agent started goes.
    await waitFor(
      "three booted instances",
      async () => l.emulators().filter((e) => e.bootCompleted).length === 3,
    );
    agent.child.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
    expect(l.emulators()).toEqual([]);
    const pids = launchesOf(l, AVD).map((e) => e.pid);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
  });

  it("an emulator that crashes mid-run is restarted and its run re-queued, not failed", async () => {
    // A test of 200 s of device time: 2 s here, long enough to crash the emulator while it runs.
    const l = await lab(200_000);
    const agent = android.startAgent("emu-2", l.env, ["--emulator", AVD]);
    await waitFor("a booted instance", async () => l.emulators().some((e) => e.bootCompleted));
    const id = await android.triggerInstrumentation("1.0.0", { record_video: "never" });
    await waitFor("the test to run", async () =>
      l
        .calls()
        .some(
          (c) => c.tool === "adb" && c.argv.join(" ").includes("am instrument") && !c.argv.includes("log"),
        ),
    );
    const crashed = l.emulators()[0];
    l.crashEmulator(crashed?.serial as string);
    const view = await android.finished(id);
    expect(view.status, agent.output()).toBe("passed");
    const runs = (await call(`${android.server.baseUrl}/executions/${id}`, { headers: android.ci })).body;
    expect(JSON.stringify(runs)).toContain('"attempt":2');
    // One launch for the snapshot, one for the instance, one after the crash.
    expect(launchesOf(l, AVD).length).toBeGreaterThanOrEqual(3);
    expect(l.emulatorLaunches().some((e) => e.exit === 139)).toBe(true);
    expect(agent.output()).toMatch(/exited with code 139: restarting it/);
  });

  it("an emulator that never boots is failed after three restarts, with its last lines as the error", async () => {
    const l = await lab(400, [
      { name: AVD, model: "Pixel 7" },
      { name: "Broken_API_34", model: "Pixel 7" },
    ]);
    l.failBoots("Broken_API_34", 100, "exit");
    const agent = android.startAgent("emu-3", l.env, ["--emulator", "Broken_API_34"]);
    await waitFor("the instance to fail", async () =>
      /emulator-\d+ \(Broken_API_34\) failed/.test(agent.output()),
    );
    // The snapshot's boot, then four launches of the instance (the first and three restarts), and no more.
    const launches = launchesOf(l, "Broken_API_34");
    expect(launches).toHaveLength(5);
    expect(agent.output()).toContain("4 launches used");
    expect(agent.output()).toContain("is pending and timeout has expired");
    expect(l.emulators()).toEqual([]);
    // The server shows it failed, with the emulator's last lines as its error.
    const [failed] = await waitFor("the failed device in GET /agents", async () => {
      const devices = await agentDevices("emu-3");
      return devices.some((d) => d.state === "failed") && devices;
    });
    expect(failed).toMatchObject({ state: "failed", managed: true, pool: "Broken_API_34" });
    expect(failed?.error).toContain(
      "FATAL   | A snapshot operation for 'Broken_API_34' is pending and timeout has expired. Exiting...",
    );
  });

  it("an AVD the emulator does not know, or an --emulator or --label it cannot read, stops the agent with exit 2", async () => {
    const l = await lab();
    const unknown = android.startAgent("emu-4", l.env, ["--emulator", "Nexus_5_API_21=2"]);
    expect(await unknown.exited).toBe(2);
    expect(unknown.output()).toContain(`no AVD named Nexus_5_API_21 (emulator -list-avds knows ${AVD})`);
    expect(l.emulatorLaunches()).toEqual([]);
    const badCount = android.startAgent("emu-5", l.env, ["--emulator", `${AVD}=0`]);
    expect(await badCount.exited).toBe(2);
    expect(badCount.output()).toContain("the count after = is a whole number from 1 to 16");
    const badLabel = android.startAgent("emu-6", l.env, ["--label", "team"]);
    expect(await badLabel.exited).toBe(2);
    expect(badLabel.output()).toContain('--label "team": use KEY=VALUE');
  });
});
