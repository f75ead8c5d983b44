import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createDeviceLab, type DeviceLab } from "../../test/stand-ins/device-lab.ts";
import { until } from "../../test/stand-ins/run.ts";
import { ManagedEmulators } from "./managed-emulators.ts";

// The --emulator pool on the emulator stand-in (test/stand-ins/emulator.mjs), without a server: what a writable
// instance's reset does, and the restarts of self-healing. The agent around it: test/managed-emulators.int.test.ts.

const APP = join(
  fileURLToPath(new URL("../../../server/test/fixtures/binaries/", import.meta.url)),
  "app-basic.apk",
);
const AVD = "Pixel_7_API_34";

let lab: DeviceLab;
let pool: ManagedEmulators | undefined;
let logs: string[];

afterEach(async () => {
  await pool?.stop();
  pool = undefined;
  lab?.cleanup();
});

async function startPool(instances = 1, extra: { healthCheckMs?: number } = {}) {
  lab = await createDeviceLab({ avds: [{ name: AVD, model: "Pixel 7" }], timeScale: 0.01 });
  logs = [];
  pool = new ManagedEmulators({
    requests: [{ avd: AVD, instances }],
    env: { ...process.env, ...lab.env },
    log: (line) => logs.push(line),
    pollMs: 20,
    ...extra,
  });
  await pool.start();
  return pool;
}

async function adbInstall(serial: string) {
  const { execFileSync } = await import("node:child_process");
  execFileSync("adb", ["-s", serial, "install", APP], { env: { ...process.env, ...lab.env } });
}

const pidOf = (serial: string) => lab.emulators().find((e) => e.serial === serial)?.pid;

describe("ManagedEmulators on the stand-in", () => {
  it("a single writable instance is reset by loading the clean snapshot, without a restart", async () => {
    const p = await startPool(1);
    expect(p.devices()).toEqual([
      {
        serial: "emulator-5554",
        platform: "android",
        model: "Pixel 7",
        os_version: "14",
        api_level: 34,
        abi: "x86_64",
        pool: AVD,
        state: "idle",
        error: null,
        // Its boot from the clean snapshot, launch to sys.boot_completed.
        boot_ms: expect.any(Number),
      },
    ]);
    const [instance] = lab.emulators();
    expect(instance).toMatchObject({ readOnly: false, snapshot: "testbay-clean" });
    await adbInstall("emulator-5554");
    expect(Object.keys(lab.installed("emulator-5554"))).toEqual(["com.example.basic"]);
    p.runFinished("emulator-5554", true);
    const { setupMs } = await p.reset("emulator-5554");
    expect(setupMs).toBeGreaterThanOrEqual(0);
    expect(lab.installed("emulator-5554")).toEqual({});
    expect(pidOf("emulator-5554")).toBe(instance?.pid);
    expect(lab.calls().map((c) => c.argv.join(" "))).toContain(
      "-s emulator-5554 emu avd snapshot load testbay-clean",
    );
    expect(p.devices()[0]?.state).toBe("idle");
  });

  it("restarts an instance that gave way in three runs in a row, and one that went offline", async () => {
    const p = await startPool(1, { healthCheckMs: 30 });
    const first = pidOf("emulator-5554");
    for (let i = 0; i < 3; i++) p.runFinished("emulator-5554", false);
    await p.reset("emulator-5554");
    const second = pidOf("emulator-5554");
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    expect(logs.some((l) => l.includes("gave way in 3 runs in a row: restarting it (launch 2)"))).toBe(true);

    lab.offline("emulator-5554");
    await until(
      () =>
        pidOf("emulator-5554") !== undefined &&
        pidOf("emulator-5554") !== second &&
        p.devices()[0]?.state === "idle",
      "the offline instance restarted",
    );
    expect(logs.some((l) => /went offline \(adb: device offline\): restarting it \(launch 3\)/.test(l))).toBe(
      true,
    );
  });

  it("refuses an AVD the emulator does not know, naming those it does", async () => {
    lab = await createDeviceLab({ avds: [{ name: AVD }], timeScale: 0.01 });
    pool = new ManagedEmulators({
      requests: [{ avd: "Nexus_5_API_21", instances: 1 }],
      env: { ...process.env, ...lab.env },
      log: () => {},
    });
    await expect(pool.start()).rejects.toThrow(
      `no AVD named Nexus_5_API_21 (emulator -list-avds knows ${AVD})`,
    );
    expect(lab.emulatorLaunches()).toEqual([]);
  });

  it("stop() ends every instance it started", async () => {
    const p = await startPool(2);
    expect(lab.emulators().map((e) => e.readOnly)).toEqual([true, true]);
    await p.stop();
    expect(lab.emulators()).toEqual([]);
    for (const launch of lab.emulatorLaunches()) expect(() => process.kill(launch.pid, 0)).toThrow();
  });
});
