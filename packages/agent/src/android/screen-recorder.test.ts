import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { createDeviceLab, type DeviceLab } from "../../test/stand-ins/device-lab.ts";
import { makeStepContext, type TestStepContext } from "../steps/test-context.ts";
import { Adb } from "./adb.ts";
import { failing, startCaptures, withCaptures } from "./device-captures.ts";
import { ScreenRecorder } from "./screen-recorder.ts";

// Where in the video a failure is: the recorder says how far into the segment recording at a moment that moment
// lies, so the dashboard can open the video there. Checked against the stateful screenrecord stand-in, which
// records from its process's start and writes the real length into the MP4 (mvhd duration) when it stops.

const SERIAL = "emulator-5554";

let lab: DeviceLab | undefined;
let dir: string | undefined;
let ctx: TestStepContext | undefined;

afterEach(async () => {
  await ctx?.cleanup();
  lab?.cleanup();
  if (dir) await rm(dir, { recursive: true, force: true });
  lab = undefined;
  dir = undefined;
  ctx = undefined;
});

async function setUp(timeScale: number) {
  lab = await createDeviceLab({ devices: [{ serial: SERIAL, model: "Pixel 7", sdk: 34 }], timeScale });
  dir = await mkdtemp(join(tmpdir(), "testbay-recorder-"));
  const adb = new Adb(SERIAL, {
    workDir: dir,
    signal: new AbortController().signal,
    env: { ...process.env, ...lab.env },
  });
  return { lab, dir, adb };
}

/** An MP4's length in ms from its movie header (mvhd version 0: timescale at +12, duration at +16). */
function mp4DurationMs(file: string): number {
  const mp4 = readFileSync(file);
  const at = mp4.indexOf("mvhd", 0, "latin1");
  if (at < 0) throw new Error(`${file}: no mvhd (the recording was not stopped cleanly)`);
  const payload = at + 4;
  return (mp4.readUInt32BE(payload + 16) / mp4.readUInt32BE(payload + 12)) * 1000;
}

/** Waits until the device has the segment's file: its screenrecord process is running. */
async function recording(l: DeviceLab, devicePath: string) {
  for (let tries = 0; tries < 200 && !l.files(SERIAL)[devicePath]; tries++) await delay(25);
  expect(Object.keys(l.files(SERIAL))).toContain(devicePath);
}

describe("ScreenRecorder.position on the screenrecord stand-in", () => {
  it("says how far into the recording segment a moment is, within the video that is kept", async () => {
    const { lab, dir, adb } = await setUp(1);
    const recorder = new ScreenRecorder(adb, { device: "/sdcard/rec", artifact: "video/part" }, () => {});
    expect(recorder.position()).toBeUndefined();
    recorder.start();
    await recording(lab, "/sdcard/rec-1.mp4");
    const seen = Date.now();
    await delay(400);
    const at = Date.now();
    const position = recorder.position(at);
    // The failure is followed by more recording, as in a run (the next tests), before the video is stopped.
    await delay(400);
    await recorder.stop();
    expect(await recorder.collect(dir, true)).toEqual(["video/part-01.mp4"]);

    expect(position?.artifact).toBe("video/part-01.mp4");
    const offset = position?.offsetMs ?? -1;
    // The recording had begun before its file was seen, so the moment is at least that far in…
    expect(offset).toBeGreaterThanOrEqual(at - seen);
    // …and inside the video the player gets.
    expect(offset).toBeLessThanOrEqual(mp4DurationMs(join(dir, "video/part-01.mp4")));
  });

  it("counts from the start of the segment recording at that moment, not of the first one", async () => {
    // 0.01: screenrecord's 180 s limit lasts 1.8 s, then the recorder starts segment 2.
    const { lab, dir, adb } = await setUp(0.01);
    const recorder = new ScreenRecorder(adb, { device: "/sdcard/rec", artifact: "video/part" }, () => {});
    const began = Date.now();
    recorder.start();
    await recording(lab, "/sdcard/rec-2.mp4");
    const position = recorder.position();
    await delay(400);
    await recorder.stop();
    expect(await recorder.collect(dir, true)).toEqual(["video/part-01.mp4", "video/part-02.mp4"]);

    expect(position?.artifact).toBe("video/part-02.mp4");
    const offset = position?.offsetMs ?? -1;
    const first = mp4DurationMs(join(dir, "video/part-01.mp4"));
    expect(offset).toBeLessThanOrEqual(mp4DurationMs(join(dir, "video/part-02.mp4")));
    // Measured from the first segment's start it would be past the first segment's whole length.
    expect(offset).toBeLessThan(Date.now() - began - first);
  });

  it("puts a moment after the recording stopped at the end of its last segment", async () => {
    const { lab, adb } = await setUp(1);
    const recorder = new ScreenRecorder(adb, { device: "/sdcard/rec", artifact: "video/part" }, () => {});
    recorder.start();
    await recording(lab, "/sdcard/rec-1.mp4");
    await delay(200);
    await recorder.stop();
    const atStop = recorder.position();
    expect(atStop?.artifact).toBe("video/part-01.mp4");
    expect(recorder.position(Date.now() + 60_000)).toEqual(atStop);
  });
});

describe("withCaptures", () => {
  it("names the video segment of a failure and how far into it the failure is; a pass gets neither", async () => {
    const { lab, adb } = await setUp(1);
    ctx = await makeStepContext();
    const captures = await startCaptures({ record_video: "always", logcat: false }, ctx, adb);
    const videoFile = captures.video?.current?.devicePath ?? "";
    await recording(lab, videoFile);
    const testCase = {
      classname: "com.example.basic.LoginTest",
      name: "rejectsBadPassword",
      status: "failed" as const,
      duration_ms: 300,
      message: "expected:<Welcome> but was:<Sign in>",
      details: null,
    };
    await delay(300);
    const failed = await withCaptures(testCase, captures, adb, ctx);
    const passed = await withCaptures({ ...testCase, status: "passed" }, captures, adb, ctx);
    await delay(300);
    await captures.stop();
    const [kept] = await captures.collect(true, [failed, passed]);

    expect(failing(failed)).toBe(true);
    const video = `device-${SERIAL}/video/part-01.mp4`;
    expect(kept).toBe(video);
    expect(failed.artifacts).toContain(video);
    expect(failed.video_offset_ms).toBeGreaterThanOrEqual(300);
    expect(failed.video_offset_ms).toBeLessThanOrEqual(mp4DurationMs(join(ctx.artifactsDir, video)));
    expect(passed.video_offset_ms).toBeUndefined();
    expect(passed.artifacts).toBeUndefined();
  });
});
