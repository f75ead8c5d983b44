import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FAKE_BIN_DIR } from "../steps/test-context.ts";
import { discoverDevices } from "./discover-devices.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "testbay-discover-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const fakeEnv = (extra: Record<string, string>) => ({
  ...process.env,
  PATH: `${FAKE_BIN_DIR}${delimiter}${process.env.PATH ?? ""}`,
  FAKE_TOOL_ARGV_LOG: join(dir, "argv.log"),
  ...extra,
});

async function calls(): Promise<string[][]> {
  const text = await readFile(join(dir, "argv.log"), "utf8");
  return text
    .trim()
    .split("\n")
    .map((line) => (JSON.parse(line) as { argv: string[] }).argv);
}

describe("discoverDevices", () => {
  it("lists the ready devices with their Android release, skipping unusable ones", async () => {
    const found = await discoverDevices({ env: fakeEnv({ FAKE_ADB_DEVICES: "adb-devices-mixed.txt" }) });
    expect(found).toEqual({
      devices: [
        { serial: "emulator-5554", platform: "android", model: "sdk_gphone64_x86_64", os_version: "14" },
        { serial: "2B161FDH2007TX", platform: "android", model: "Pixel_8", os_version: "14" },
      ],
      reason: null,
    });
    expect(await calls()).toEqual([
      ["devices", "-l"],
      ["-s", "emulator-5554", "shell", "getprop", "ro.build.version.release"],
      ["-s", "2B161FDH2007TX", "shell", "getprop", "ro.build.version.release"],
    ]);
  });

  it("finds nothing, without a reason, when no device is attached", async () => {
    expect(await discoverDevices({ env: fakeEnv({ FAKE_ADB_DEVICES: "adb-devices-empty.txt" }) })).toEqual({
      devices: [],
      reason: null,
    });
  });

  it("says why when adb is not on PATH", async () => {
    expect(await discoverDevices({ env: { PATH: dir } })).toEqual({
      devices: [],
      reason: "adb is not on PATH",
    });
  });
});
