import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createDeviceLab, type DeviceLab } from "../../test/stand-ins/device-lab.ts";
import { Adb } from "./adb.ts";
import { startLogcat } from "./logcat-capture.ts";

// Against the stateful adb stand-in, whose logcat follower, like the real one, delivers a line some time after
// the device logged it.

const serial = "emulator-5554";
let lab: DeviceLab | undefined;
let dir: string | undefined;

afterEach(async () => {
  vi.unstubAllEnvs();
  lab?.cleanup();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("startLogcat", () => {
  it("keeps every line the device logged before the stop, even those logged just before it", async () => {
    lab = await createDeviceLab({ devices: [{ serial, model: "Pixel 7", release: "14", sdk: 34 }] });
    for (const [name, value] of Object.entries(lab.env)) vi.stubEnv(name, value);
    dir = await mkdtemp(path.join(tmpdir(), "testbay-logcat-"));
    const adb = new Adb(serial, { workDir: dir, signal: new AbortController().signal });
    const file = path.join(dir, "logcat.txt");

    const capture = await startLogcat(adb, file);
    // The device's log, as the stand-in's own processes write it (state in FAKE_ADB_STATE).
    const { log } = await import("../../test/stand-ins/logcat.mjs");
    const lines = Array.from({ length: 200 }, (_, i) => `line ${i}`);
    log(serial, 4242, 4242, "I", "Rerun", lines);
    await capture.stop();

    const kept = (await readFile(file, "utf8")).trimEnd().split("\n");
    expect(kept.map((line) => line.replace(/^.*Rerun\s*: /, ""))).toEqual(lines);
    expect(capture.lineCount).toBe(200);
  });
});
