/**
 * What a device step captures around its tests (API.md §5 device options): logcat from a cleared buffer,
 * video when asked, a screenshot of each failure; once the run is over they become artifacts, named on the
 * test cases they belong to. Shared by the instrumentation and maestro steps.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { StepContext, TestCase } from "../steps/step-types.ts";
import type { Adb } from "./adb.ts";
import { artifactSegment, testArtifactName } from "./artifact-names.ts";
import { type LogcatCapture, startLogcat } from "./logcat-capture.ts";
import { cutLogcatRuns, testKey } from "./logcat-cut.ts";
import { ScreenRecorder } from "./screen-recorder.ts";
import { takeScreenshot } from "./screenshot.ts";

export interface CaptureOptions {
  logcat?: boolean;
  record_video?: "never" | "on_failure" | "always";
  screenshot_on_failure?: boolean;
}

export const failing = (testCase: TestCase) => testCase.status === "failed" || testCase.status === "errored";

export interface Captures {
  logcat: LogcatCapture | null;
  video: ScreenRecorder | null;
  screenshots: boolean;
  /** Artifact folder of this device's captures: "device-emulator-5554". */
  folder: string;
  /** The whole log's artifact name, when logcat is captured. */
  logcatArtifact: string | null;
  stop(): Promise<void>;
  /**
   * Keeps (or drops) the captures once the run is over: video when `always`, or `on_failure` and something
   * failed; the log, and each failed try's part of it when `perTestLogcat`. Returns the video segments kept.
   * `neverStarted`: tries the runner never started (reported as "did not run"), which have no part of the log.
   */
  collect(
    anyFailure: boolean,
    reported: readonly TestCase[],
    perTestLogcat?: boolean,
    neverStarted?: ReadonlySet<TestCase>,
  ): Promise<string[]>;
}

export async function startCaptures(options: CaptureOptions, ctx: StepContext, adb: Adb): Promise<Captures> {
  const folder = `device-${artifactSegment(adb.serial)}`;
  // Followed straight into the artifacts folder: the whole log is kept as it is, so it is written once.
  const logcatFile = path.join(ctx.artifactsDir, folder, "logcat.txt");
  if (options.logcat !== false) await mkdir(path.dirname(logcatFile), { recursive: true });
  const logcat = options.logcat === false ? null : await startLogcat(adb, logcatFile);
  const videoMode = options.record_video ?? "on_failure";
  const video =
    videoMode === "never"
      ? null
      : new ScreenRecorder(
          adb,
          {
            device: `/sdcard/testbay-${path.basename(ctx.workDir)}-${Date.now()}`,
            artifact: `${folder}/video/part`,
          },
          (line) => ctx.log("agent", line),
        );
  video?.start();
  return {
    logcat,
    video,
    screenshots: options.screenshot_on_failure !== false,
    folder,
    logcatArtifact: logcat ? `${folder}/logcat.txt` : null,
    async stop() {
      await Promise.all([logcat?.stop(), video?.stop()]);
    },
    async collect(anyFailure, reported, perTestLogcat = true, neverStarted = new Set()) {
      const kept = video ? await video.collect(ctx.artifactsDir, videoMode === "always" || anyFailure) : [];
      if (logcat) await keepLogcat(logcatFile, perTestLogcat ? reported : [], neverStarted, ctx, folder);
      return kept;
    },
  };
}

/**
 * The test case as reported: a failure gets its screenshot now (while the screen still shows it, when it
 * can), the names of the logcat cut and video segment that will be kept for it, and how far into that
 * segment it failed (video_offset_ms), so a player can open the video at the failure.
 */
export async function withCaptures(
  testCase: TestCase,
  captures: Captures,
  adb: Adb,
  ctx: StepContext,
  screenshot = true,
): Promise<TestCase> {
  if (!failing(testCase)) return testCase;
  // Where the failure is in the video, taken first: the screenshot below takes a moment of its own.
  const video = captures.video?.position();
  const artifacts: string[] = [];
  const retry = testCase.retry ?? 0;
  if (screenshot && captures.screenshots) {
    const name = testArtifactName(
      `${captures.folder}/screenshots`,
      testCase.classname,
      testCase.name,
      "png",
      retry,
    );
    if (await takeScreenshot(adb, path.join(ctx.artifactsDir, name))) artifacts.push(name);
  }
  if (captures.logcat) {
    artifacts.push(
      testArtifactName(`${captures.folder}/logcat`, testCase.classname, testCase.name, "txt", retry),
    );
  }
  if (!video) return { ...testCase, artifacts };
  artifacts.push(video.artifact);
  return { ...testCase, artifacts, video_offset_ms: video.offsetMs };
}

/**
 * Each failed try's part of the whole log (already in the artifacts folder) as an artifact of its own. A test
 * tried more than once has a `started` marker per try the runner started, in the order of its tries.
 */
async function keepLogcat(
  file: string,
  reported: readonly TestCase[],
  neverStarted: ReadonlySet<TestCase>,
  ctx: StepContext,
  folder: string,
): Promise<void> {
  const failed = reported.filter(failing);
  const parts = await cutLogcatRuns(file, new Set(failed.map((c) => testKey(c.classname, c.name))));
  const runIndex = new Map<TestCase, number>();
  const started = new Map<string, number>();
  for (const testCase of [...reported].sort((a, b) => (a.retry ?? 0) - (b.retry ?? 0))) {
    if (neverStarted.has(testCase)) continue;
    const key = testKey(testCase.classname, testCase.name);
    const index = started.get(key) ?? 0;
    runIndex.set(testCase, index);
    started.set(key, index + 1);
  }
  for (const testCase of failed) {
    const key = testKey(testCase.classname, testCase.name);
    const runs = parts.get(key) ?? [];
    const index = runIndex.get(testCase);
    // A test started once has one part, whatever else the log holds: its last run there.
    const part = index === undefined ? undefined : started.get(key) === 1 ? runs.at(-1) : runs[index];
    // Named on the test case already: without the runner's markers it says where to look instead.
    const lines = part ?? [
      `No "TestRunner: started: ${testCase.name}(${testCase.classname})" line in the device log; see ${folder}/logcat.txt.`,
    ];
    const cut = path.join(
      ctx.artifactsDir,
      testArtifactName(`${folder}/logcat`, testCase.classname, testCase.name, "txt", testCase.retry ?? 0),
    );
    await mkdir(path.dirname(cut), { recursive: true });
    await writeFile(cut, `${lines.join("\n")}\n`, { mode: 0o600 });
  }
}
