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

    const pids = l.emulators().map((e) => e.pid);
    expect(pids).toHaveLength(3);
    agent.child.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
    expect(l.emulators()).toEqual([]);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
  });

  it("an emulator that crashes mid-run is restarted and its run re-queued, not failed", async () => {
    const l = await lab(20_000);
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
    expect(view.status).toBe("passed");
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
  });
});
