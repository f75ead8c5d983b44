/**
 * What an xcuitest step captures on a simulator around its tests (API.md §5 device options): the device log
 * (`xcrun simctl spawn UDID log stream`, followed into a file until the run ends) and, when asked, video
 * (`xcrun simctl io UDID recordVideo`). recordVideo must be stopped with SIGINT: only then does it finish the
 * file; a killed recording is a file no player opens. A physical device has neither here (its log and screen
 * need tools that are not part of Xcode's command line).
 */
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { artifactSegment } from "../android/artifact-names.ts";
import type { StepContext } from "../steps/step-types.ts";
import type { XcodeTools } from "./xcrun.ts";

export interface SimulatorCaptureOptions {
  logcat?: boolean;
  record_video?: "never" | "on_failure" | "always";
}

export interface SimulatorCaptures {
  /** Artifact folder of this device's captures: "device-<UDID>". */
  folder: string;
  /** The whole device log's artifact name, when it is captured. */
  logArtifact: string | null;
  /** The video's artifact name when video is recorded (kept at the end if the mode says so), else null. */
  videoArtifact: string | null;
  stop(): Promise<void>;
  /** Keeps the video when `always`, or `on_failure` and something failed; returns its artifact name if kept. */
  collect(anyFailure: boolean): Promise<string[]>;
}

/** How long a stopped recorder may take to finish its file before it is killed. */
const finishMs = 15_000;
/** How long a capture that has not said it started yet is waited for (recordVideo's stop, log stream's start). */
const startMs = 5_000;

export async function startSimulatorCaptures(
  options: SimulatorCaptureOptions,
  ctx: StepContext,
  tools: XcodeTools,
  udid: string,
): Promise<SimulatorCaptures> {
  const folder = `device-${artifactSegment(udid)}`;
  await mkdir(path.join(ctx.artifactsDir, folder), { recursive: true });
  const logArtifact = options.logcat === false ? null : `${folder}/device-log.txt`;
  const log = logArtifact ? followLog(tools, udid, path.join(ctx.artifactsDir, logArtifact)) : null;
  // `log stream` shows what is logged from the moment it follows (it prints its header then): the tests must
  // not start before, or their first lines are not in the log.
  if (log) await log.following;
  const videoMode = options.record_video ?? "on_failure";
  const videoArtifact = `${folder}/video/part-01.mp4`;
  const videoFile = path.join(ctx.artifactsDir, videoArtifact);
  let video: Recording | null = null;
  if (videoMode !== "never") {
    await mkdir(path.dirname(videoFile), { recursive: true });
    video = recordVideo(udid, videoFile, ctx.workDir, tools.env, (line) => ctx.log("agent", line));
  }
  return {
    folder,
    logArtifact,
    videoArtifact: video ? videoArtifact : null,
    async stop() {
      await Promise.all([log?.stop(), video?.stop()]);
    },
    async collect(anyFailure) {
      if (!video) return [];
      if ((videoMode === "always" || anyFailure) && (await video.finished)) return [videoArtifact];
      await rm(videoFile, { force: true });
      return [];
    },
  };
}

function followLog(tools: XcodeTools, udid: string, file: string) {
  const out = createWriteStream(file, { mode: 0o600 });
  const stop = new AbortController();
  let markFollowing = () => {};
  const waited = new AbortController();
  const following = Promise.race([
    new Promise<void>((resolve) => {
      markFollowing = resolve;
    }),
    delay(startMs, undefined, { signal: waited.signal }).catch(() => {}),
  ]).then(() => waited.abort());
  // No time limit of its own: it lives as long as the run, and stop() ends it.
  const running = tools.run(
    "xcrun",
    ["simctl", "spawn", udid, "log", "stream", "--level", "debug", "--style", "compact"],
    24 * 3600 * 1000,
    "quiet",
    (stream, line) => {
      if (stream !== "stdout") return;
      markFollowing();
      out.write(`${line}\n`);
    },
    stop.signal,
  );
  // A stream that could not start (the simulator is not booted) is not waited for.
  void running.then(() => markFollowing());
  return {
    following,
    async stop() {
      stop.abort();
      await running;
      await new Promise<void>((resolve) => out.end(resolve));
    },
  };
}

interface Recording {
  stop(): Promise<void>;
  /** Resolves true when the recorder ended cleanly after SIGINT (its file is complete). */
  finished: Promise<boolean>;
}

function recordVideo(
  udid: string,
  file: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Recording {
  const child = spawn("xcrun", ["simctl", "io", udid, "recordVideo", "--codec=h264", "--force", file], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  // simctl says "Recording started" once it records (and handles SIGINT); a SIGINT before that ends it
  // before it wrote anything, so stop() waits for it, a little.
  let markStarted = () => {};
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    if (chunk.includes("Recording started")) markStarted();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    if (chunk.includes("Recording started")) markStarted();
    if (stderr.length < 4096) stderr += chunk;
  });
  let stopping = false;
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("error", (error) => {
      stderr ||= error.message;
      resolve({ code: null, signal: null });
    });
    child.on("close", (code, signal) => resolve({ code, signal }));
  });
  const finished = ended.then(({ code, signal }) => {
    // Only an exit 0 after SIGINT means the file was finished (its index written).
    const clean = stopping && code === 0;
    if (!clean) {
      const why = stderr.trim().split("\n").at(-1) || (signal ? `killed by ${signal}` : `exit code ${code}`);
      log(`video: recordVideo ended: ${why}`);
    }
    return clean;
  });
  return {
    finished,
    async stop() {
      if (stopping) return;
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const waited = new AbortController();
      const giveUp = delay(startMs, undefined, { signal: waited.signal }).catch(() => {});
      await Promise.race([started, ended, giveUp]);
      waited.abort();
      child.kill("SIGINT");
      const timer = setTimeout(() => child.kill("SIGKILL"), finishMs);
      await ended;
      clearTimeout(timer);
    },
  };
}
