/**
 * The Appium server the agent starts per session and its inventory, against the real `appium` with Appium's own
 * fake driver installed in a temporary APPIUM_HOME.
 */

import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAppiumInventory } from "../../src/appium/appium-inventory.ts";
import { prepareAppiumOffer } from "../../src/appium/appium-offer.ts";
import { AppiumStartError, startAppiumServer } from "../../src/appium/appium-server.ts";
import { isPortFree, PortBlocks } from "../../src/appium/port-blocks.ts";
import { APPIUM_EXECUTABLE, type FakeDriverHome, installFakeDriver } from "./fake-driver-home.ts";

const HOLD_APPIUM = fileURLToPath(new URL("./fixtures/hold-appium.ts", import.meta.url));

let fake: FakeDriverHome;
let dir: string;
// Each suite its own range, below Linux's ephemeral ports (32768–60999) that outgoing connections take.
const ports = new PortBlocks({ from: 24730, to: 24829 });

beforeAll(async () => {
  fake = await installFakeDriver();
  dir = await mkdtemp(join(tmpdir(), "testbay-appium-server-"));
});

afterAll(async () => {
  await fake?.cleanup();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("startAppiumServer", () => {
  it("starts Appium on the port, ready, logging to the file, and stops it: port freed, process gone", async () => {
    const block = await ports.reserve();
    const logFile = join(dir, "start-stop.log");
    const server = await startAppiumServer({
      executable: APPIUM_EXECUTABLE,
      port: block.appiumPort,
      logFile,
      env: fake.env,
    });
    try {
      const status = (await fetch(`${server.url}/status`).then((res) => res.json())) as {
        value: { ready: boolean };
      };
      expect(status.value.ready).toBe(true);
      expect(await isPortFree(block.appiumPort)).toBe(false);
      expect(processExists(server.pid)).toBe(true);
    } finally {
      const exit = await server.stop();
      expect(exit.signal === "SIGTERM" || exit.code === 0).toBe(true);
      block.release();
    }
    expect(await isPortFree(block.appiumPort)).toBe(true);
    expect(processExists(server.pid)).toBe(false);
    // Nothing of its process group is left either.
    expect(() => process.kill(-server.pid, 0)).toThrow();
    const log = await readFile(logFile, "utf8");
    expect(log).toContain("Appium REST http interface listener started");
    // --log-no-colors: no ANSI escapes in the artifact.
    expect(log).not.toContain("\u001b[");
  });

  it("fails with Appium's own words when it cannot listen, and leaves nothing running", async () => {
    const block = await ports.reserve();
    const first = await startAppiumServer({
      executable: APPIUM_EXECUTABLE,
      port: block.appiumPort,
      logFile: join(dir, "first.log"),
      env: fake.env,
    });
    const second = startAppiumServer({
      executable: APPIUM_EXECUTABLE,
      port: block.appiumPort,
      logFile: join(dir, "second.log"),
      env: fake.env,
    });
    try {
      await expect(second).rejects.toThrow(AppiumStartError);
      await expect(second).rejects.toThrow(/exited before it was ready.*EADDRINUSE/);
    } finally {
      // Were it taken for ready, it is stopped here rather than outlive the test.
      await second.then(
        (server) => server.stop(),
        () => undefined,
      );
      await first.stop();
      block.release();
    }
  });

  it("says when the executable is missing", async () => {
    await expect(
      startAppiumServer({ executable: join(dir, "no-appium"), port: 24829, logFile: join(dir, "x.log") }),
    ).rejects.toThrow("is not an executable file (--appium PATH)");
    await expect(
      startAppiumServer({ port: 24829, logFile: join(dir, "x.log"), env: { PATH: dir } }),
    ).rejects.toThrow("appium is not on PATH");
  });
});

describe("an agent that dies without running any code", () => {
  it("takes its Appium with it: the watchdog stops Appium's process group and the port is freed", async () => {
    const block = await ports.reserve();
    const holder = spawn(
      process.execPath,
      ["--import", "tsx", HOLD_APPIUM, APPIUM_EXECUTABLE, String(block.appiumPort), join(dir, "held.log")],
      { env: fake.env, stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      const [line] = (await once(createInterface({ input: holder.stdout }), "line")) as [string];
      const held = JSON.parse(line) as { pid: number; port: number };
      expect(await isPortFree(held.port)).toBe(false);
      expect(groupExists(held.pid)).toBe(true);
      // SIGKILL: no exit hook, no signal handler runs in the "agent".
      holder.kill("SIGKILL");
      await expect.poll(() => groupExists(held.pid)).toBe(false);
      expect(await isPortFree(held.port)).toBe(true);
    } finally {
      holder.kill("SIGKILL");
      block.release();
    }
  });
});

describe("prepareAppiumOffer", () => {
  const settings = {
    executable: APPIUM_EXECUTABLE,
    allowLocalApps: false,
    allowPrivateAppUrls: true,
    ports: { from: 5000, to: 5099 },
  };

  it("finds Appium, lists its drivers and gives the options sessions run with", async () => {
    const offer = await prepareAppiumOffer(settings, fake.env);
    expect(offer.inventory.drivers.map((d) => d.name)).toEqual(["fake"]);
    expect(offer.warnings).toEqual([]);
    expect(offer.agentOptions).toMatchObject({
      executable: APPIUM_EXECUTABLE,
      allowLocalApps: false,
      allowPrivateAppUrls: true,
      env: fake.env,
    });
    expect(offer.agentOptions.portBlocks.range).toEqual({ from: 5000, to: 5099 });
  });

  it("warns when APPIUM_HOME has no driver, and refuses an appium that is not there", async () => {
    const emptyHome = await mkdtemp(join(tmpdir(), "testbay-appium-empty-home-"));
    try {
      const offer = await prepareAppiumOffer(settings, { ...fake.env, APPIUM_HOME: emptyHome });
      expect(offer.inventory.drivers).toEqual([]);
      expect(offer.warnings).toEqual([
        expect.stringContaining(`has no drivers in APPIUM_HOME (${emptyHome})`),
      ]);
    } finally {
      await rm(emptyHome, { recursive: true, force: true });
    }
    await expect(
      prepareAppiumOffer({ ...settings, executable: join(dir, "nothing-here") }, fake.env),
    ).rejects.toThrow("--appium PATH");
  });
});

describe("readAppiumInventory", () => {
  it("lists Appium's version and the fake driver installed in APPIUM_HOME", async () => {
    const inventory = await readAppiumInventory(APPIUM_EXECUTABLE, fake.env);
    expect(inventory.version).toMatch(/^3\.\d+\.\d+/);
    expect(inventory.drivers).toEqual([{ name: "fake", automation_name: "Fake", platform_names: ["Fake"] }]);
  });
});
