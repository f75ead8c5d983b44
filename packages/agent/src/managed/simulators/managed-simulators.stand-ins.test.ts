// The --simulator pool on the Apple lab's simctl stand-in (test/stand-ins/xc-simctl.mjs): specs refused with
// what this Xcode has, simulators found by their Testbay names or created, booted clean, reset after a run so
// that nothing installed survives, restarted when they do not boot, vanish or lose three runs in a row (at most
// three restarts an hour, then failed with simctl's last lines), and shut down on stop, the operator's own
// simulators left alone. Conditions are awaited, never slept on.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type AppleLab, createAppleLab, runXc, writeAppBundle } from "../../../test/stand-ins/apple-lab.ts";
import type { ManagedDeviceState } from "../managed-device-pool.ts";
import { ManagedSimulators } from "./managed-simulators.ts";
import { parseSimulatorSpec } from "./simulator-spec.ts";

const IOS_17_4 = "com.apple.CoreSimulator.SimRuntime.iOS-17-4";
const OPERATORS = "0F0E0D0C-0B0A-4909-8807-060504030201";

let lab: AppleLab;
let pool: ManagedSimulators | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await pool?.stop();
  pool = undefined;
  lab?.cleanup();
  lab = undefined as unknown as AppleLab;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "testbay-managed-sims-"));
  dirs.push(dir);
  return dir;
}

async function newPool(specs: string[], options: { watchMs?: number; log?: string[] } = {}) {
  lab ??= await createAppleLab({ timeScale: 0.01 });
  const log = options.log ?? [];
  pool = new ManagedSimulators({
    specs: specs.map(parseSimulatorSpec),
    workDir: scratch(),
    env: { ...process.env, ...lab.env },
    log: (m) => log.push(m),
    watchMs: options.watchMs ?? 0,
  });
  return pool;
}

async function until<T>(what: string, read: () => T | Promise<T>, ok: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const states = () => pool?.devices().map((d) => d.state) ?? [];

describe("ManagedSimulators", () => {
  it("refuses to start on a device type or runtime this Xcode lacks, naming what it has", async () => {
    await newPool(["iPhone 99@17.4"]);
    await expect(pool?.start()).rejects.toThrow(
      'this Xcode has no device type "iPhone 99" (xcrun simctl list devicetypes). Its iPhone and iPad device types: iPhone SE (3rd generation), iPhone 15,',
    );
    await newPool(["iPhone 15@16.4"]);
    await expect(pool?.start()).rejects.toThrow(
      "no iOS 16.4 simulator runtime is installed (xcrun simctl list runtimes). Installed: iOS 17.4, iOS 17.5, iOS 18.0.",
    );
    await newPool(["iPhone 15@17.4", "iPhone 15@17.4=2"]);
    await expect(pool?.start()).rejects.toThrow("both ask for iPhone 15@17.4");
    expect(lab.simulators()).toEqual([]);
  });

  it("refuses to start where simctl cannot run, saying Xcode is needed", async () => {
    lab = await createAppleLab({ timeScale: 0.01 });
    lab.breakCoreSimulator();
    await newPool(["iPhone 15@17.4"]);
    await expect(pool?.start()).rejects.toThrow("--simulator needs Xcode's simctl, which could not list");
  });

  it("creates and boots N clean simulators, offers them, reuses them at the next start, and shuts down only its own", async () => {
    lab = await createAppleLab({
      timeScale: 0.01,
      simulators: [{ udid: OPERATORS, name: "iPhone 15", runtime: IOS_17_4, state: "Booted" }],
    });
    await newPool(["iPhone 15@17.4=2"]);
    await pool?.start();
    const devices = pool?.devices() ?? [];
    expect(devices).toEqual([
      expect.objectContaining({
        platform: "ios",
        model: "iPhone 15",
        os_version: "17.4",
        pool: "iPhone 15@17.4",
        state: "idle",
        error: null,
      }),
      expect.objectContaining({ pool: "iPhone 15@17.4", state: "idle" }),
    ]);
    const created = lab
      .simulators()
      .filter((s) => s.udid !== OPERATORS)
      .sort((a, b) => a.name.localeCompare(b.name));
    expect(created.map((s) => [s.name, s.state, s.runtime, s.deviceTypeIdentifier])).toEqual([
      ["testbay iPhone 15 17.4 #1", "Booted", IOS_17_4, "com.apple.CoreSimulator.SimDeviceType.iPhone-15"],
      ["testbay iPhone 15 17.4 #2", "Booted", IOS_17_4, "com.apple.CoreSimulator.SimDeviceType.iPhone-15"],
    ]);
    expect(devices.map((d) => d.serial)).toEqual(created.map((s) => s.udid));

    await pool?.stop();
    expect(
      lab
        .simulators()
        .map((s) => [s.name, s.state])
        .sort(),
    ).toEqual([
      ["iPhone 15", "Booted"],
      ["testbay iPhone 15 17.4 #1", "Shutdown"],
      ["testbay iPhone 15 17.4 #2", "Shutdown"],
    ]);

    const log: string[] = [];
    await newPool(["iPhone 15@17.4=3"], { log });
    await pool?.start();
    expect(log).toContain("--simulator iPhone 15@17.4: 3 simulators (2 found, 1 to create)");
    expect(
      pool
        ?.devices()
        .map((d) => d.serial)
        .slice(0, 2),
    ).toEqual(created.map((s) => s.udid));
    expect(lab.simulators()).toHaveLength(4);
  });

  it("resets after a run: shut down, erased and booted, with nothing the run installed, and the time it took", async () => {
    await newPool(["iPhone 15@17.4"]);
    await pool?.start();
    const udid = pool?.devices()[0]?.serial as string;
    const app = writeAppBundle(scratch(), { bundleId: "com.example.shop", name: "Shop" });
    expect((await runXc(lab, "xcrun", ["simctl", "install", udid, app])).code).toBe(0);
    expect(Object.keys(lab.installed(udid))).toEqual(["com.example.shop"]);
    const erasedBefore = lab.simulators()[0]?.erased ?? 0;

    const reset = pool?.reset(udid);
    expect(states()).toEqual(["resetting"]);
    const { setupMs } = (await reset) as { setupMs: number };
    expect(setupMs).toBeGreaterThan(0);
    expect(states()).toEqual(["idle"]);
    expect(lab.installed(udid)).toEqual({});
    expect(lab.simulators()[0]).toMatchObject({ state: "Booted", erased: erasedBefore + 1 });
  });

  it("restarts one that does not boot, three times at most, then lists it failed with simctl's last lines", async () => {
    lab = await createAppleLab({ timeScale: 0.01 });
    lab.onCreate("testbay iPhone 15 17.4 #2", { bootFailures: -1 });
    const log: string[] = [];
    await newPool(["iPhone 15@17.4=2"], { log });
    await pool?.start();
    const [good, bad] = pool?.devices() ?? [];
    expect(good?.state).toBe("idle");
    expect(bad?.state).toBe("failed");
    expect(bad?.error).toBe(
      "xcrun simctl boot failed (exit code 60):\n" +
        "An error was encountered processing the command (domain=NSPOSIXErrorDomain, code=60):\n" +
        "Unable to boot the Simulator.\n" +
        "launchd failed to respond.\n" +
        "Underlying error (domain=com.apple.SimLaunchHostService.RequestError, code=4):\n" +
        "\tFailed to start launchd_sim: could not bind to session, launchd_sim may have crashed or quit responding",
    );
    // The first launch and three restarts: four boots, then no more.
    expect(lab.simulators().find((s) => s.udid === bad?.serial)?.failedBoots).toBe(4);
    expect(log.filter((l) => l.includes(": restarting (launch ")).length).toBe(3);
    expect((await pool?.reset(bad?.serial as string))?.setupMs).toBe(0);
    expect(lab.simulators().find((s) => s.udid === bad?.serial)?.failedBoots).toBe(4);
  });

  it("recovers one whose reset fails to boot once, counting the restart", async () => {
    const log: string[] = [];
    await newPool(["iPhone 15@17.4"], { log });
    await pool?.start();
    const udid = pool?.devices()[0]?.serial as string;
    lab.failBoot(udid, 1);
    await pool?.reset(udid);
    expect(pool?.devices()[0]).toMatchObject({ state: "idle", error: null });
    expect(
      log.filter((l) =>
        l.includes("restarting (launch 2; at most 3 restarts an hour): xcrun simctl boot failed"),
      ),
    ).toHaveLength(1);
  });

  it("restarts one that lost three runs in a row", async () => {
    const log: string[] = [];
    await newPool(["iPhone 15@17.4"], { log });
    await pool?.start();
    const udid = pool?.devices()[0]?.serial as string;
    for (let i = 0; i < 2; i++) {
      pool?.runFinished(udid, false);
      await pool?.reset(udid);
    }
    expect(log.some((l) => l.includes("restarting ("))).toBe(false);
    pool?.runFinished(udid, true);
    pool?.runFinished(udid, false);
    pool?.runFinished(udid, false);
    await pool?.reset(udid);
    expect(log.some((l) => l.includes("restarting ("))).toBe(false);
    pool?.runFinished(udid, false);
    await pool?.reset(udid);
    expect(
      log.filter((l) =>
        l.includes("restarting (launch 2; at most 3 restarts an hour): it lost 3 runs in a row"),
      ),
    ).toHaveLength(1);
    expect(states()).toEqual(["idle"]);
  });

  it("creates again, as a restart, one that vanished during a run", async () => {
    const log: string[] = [];
    await newPool(["iPhone 15@17.4"], { log });
    await pool?.start();
    const gone = pool?.devices()[0]?.serial as string;
    lab.vanish(gone);
    pool?.runFinished(gone, false);
    await pool?.reset(gone);
    const [again] = lab.simulators();
    expect(again).toMatchObject({ name: "testbay iPhone 15 17.4 #1", state: "Booted" });
    expect(pool?.devices()[0]).toMatchObject({ serial: again?.udid, state: "idle" });
    expect(again?.udid).not.toBe(gone);
    expect(log).toContain(
      `simulator "testbay iPhone 15 17.4 #1": restarting (launch 2; at most 3 restarts an hour): simulator ${gone} vanished from xcrun simctl list devices`,
    );
  });

  it("notices an idle simulator that vanished or shut down, and brings it back", async () => {
    const log: string[] = [];
    await newPool(["iPhone 15@17.4=2"], { watchMs: 25, log });
    await pool?.start();
    const [first, second] = (pool?.devices() ?? []).map((d) => d.serial) as [string, string];
    const seen: ManagedDeviceState[][] = [];
    pool?.onChange(() => seen.push(states()));
    lab.vanish(first);
    await runXc(lab, "xcrun", ["simctl", "shutdown", second]);
    const back = await until(
      "both simulators back",
      () => pool?.devices() ?? [],
      (d) =>
        d.every((x) => x.state === "idle") &&
        d[0]?.serial !== first &&
        lab.simulators().every((s) => s.state === "Booted"),
    );
    expect(back[1]?.serial).toBe(second);
    expect(
      lab
        .simulators()
        .map((s) => s.name)
        .sort(),
    ).toEqual(["testbay iPhone 15 17.4 #1", "testbay iPhone 15 17.4 #2"]);
    expect(seen.some((s) => s.includes("booting"))).toBe(true);
    expect(log.some((l) => l.includes("no longer listed by simctl; creating it again"))).toBe(true);
  });
});
