/**
 * The Appium server the agent starts per session and its inventory, against the real `appium` with Appium's own
 * fake driver installed in a temporary APPIUM_HOME.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAppiumInventory } from "../../src/appium/appium-inventory.ts";
import { AppiumStartError, startAppiumServer } from "../../src/appium/appium-server.ts";
import { isPortFree, PortBlocks } from "../../src/appium/port-blocks.ts";
import { APPIUM_EXECUTABLE, type FakeDriverHome, installFakeDriver } from "./fake-driver-home.ts";

let fake: FakeDriverHome;
let dir: string;
const ports = new PortBlocks({ from: 47230, to: 47329 });

beforeAll(async () => {
  fake = await installFakeDriver();
  dir = await mkdtemp(join(tmpdir(), "testbay-appium-server-"));
});

afterAll(async () => {
  await fake?.cleanup();
  if (dir) await rm(dir, { recursive: true, force: true });
});

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
    try {
      const second = startAppiumServer({
        executable: APPIUM_EXECUTABLE,
        port: block.appiumPort,
        logFile: join(dir, "second.log"),
        env: fake.env,
      });
      await expect(second).rejects.toThrow(AppiumStartError);
      await expect(second).rejects.toThrow(/exited before it was ready.*EADDRINUSE/);
    } finally {
      await first.stop();
      block.release();
    }
  });

  it("says when the executable is missing", async () => {
    await expect(
      startAppiumServer({ executable: join(dir, "no-appium"), port: 47329, logFile: join(dir, "x.log") }),
    ).rejects.toThrow("is not an executable file (--appium PATH)");
    await expect(
      startAppiumServer({ port: 47329, logFile: join(dir, "x.log"), env: { PATH: dir } }),
    ).rejects.toThrow("appium is not on PATH");
  });
});

describe("readAppiumInventory", () => {
  it("lists Appium's version and the fake driver installed in APPIUM_HOME", async () => {
    const inventory = await readAppiumInventory(APPIUM_EXECUTABLE, fake.env);
    expect(inventory.version).toMatch(/^3\.\d+\.\d+/);
    expect(inventory.drivers).toEqual([{ name: "fake", automation_name: "Fake", platform_names: ["Fake"] }]);
  });
});
