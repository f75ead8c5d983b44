/**
 * The job of a WebDriver session (API.md §12; docs/appium-relay.md steps 2–4): `plan.steps[0]` is
 * `{type: "appium", capabilities, options}`. Around src/appium/appium-step.ts, which runs the session itself, this
 * does what a device step does around its tests: install the version's binary when the session names one
 * (Android: `adb install`, as steps/install-on-android.ts; iOS: apple/prepare-ios-device.ts), follow the device log
 * and record the video while the session runs, and watch that the device stays there. The session's files
 * (`appium.log`, `commands.jsonl`) are written into the job's artifacts directory, so they are uploaded with the
 * captures by the job runner. The run's status is the session's (passed after the client's DELETE, cancelled on
 * cancel, errored otherwise), with how it ended as the completion's reason.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { AgentJob, RunStatus } from "@testbay/client";
import { Adb } from "../android/adb.ts";
import { startCaptures } from "../android/device-captures.ts";
import { apkNamed, installApk } from "../android/install-apk.ts";
import { type AppiumStepResult, runAppiumStep } from "../appium/appium-step.ts";
import { readAppiumStep } from "../appium/read-appium-step.ts";
import { IosDevice } from "../apple/ios-device.ts";
import { prepareIosDevice } from "../apple/prepare-ios-device.ts";
import { startSimulatorCaptures } from "../apple/simulator-captures.ts";
import { XcodeTools } from "../apple/xcrun.ts";
import type { StepContext } from "../steps/step-types.ts";
import type { EventReporter } from "./event-reporter.ts";
import { type AppJob, hasApp } from "./job-app.ts";
import type { JobRunnerOptions } from "./job-runner-options.ts";

export interface AppiumJobRun {
  jobDir: string;
  artifactsDir: string;
  reporter: EventReporter;
  /** The job's stop: cancel (heartbeat), plan timeout, shutdown, lost lease (job-runner.ts's StopReason). */
  stop: AbortSignal;
  options: JobRunnerOptions;
}

export interface SessionJobResult {
  status: RunStatus;
  reason: string | null;
}

/** An `adb install` of the session's app that takes longer than this is stuck. */
const INSTALL_TIMEOUT_MS = 10 * 60_000;
const DEFAULT_DEVICE_CHECK_MS = 5_000;

/** Whether the job is a WebDriver session's (its first step is `appium`, which no test plan names). */
export function isAppiumJob(job: AgentJob): boolean {
  const first: unknown = job.plan.steps[0];
  return typeof first === "object" && first !== null && (first as { type?: unknown }).type === "appium";
}

const now = () => new Date().toISOString();

export async function runAppiumJob(job: AgentJob, run: AppiumJobRun): Promise<SessionJobResult> {
  const { reporter, options } = run;
  const log = (line: string) => reporter.push({ type: "log", at: now(), stream: "agent", line });
  reporter.push({ type: "step_started", at: now(), step_index: 0 });
  log("step 1/1 (appium) started");
  const result = await session(job, run, log);
  const how = result.message ? `${result.status}: ${result.message}` : result.status;
  log(`step 1/1 (appium) ${how}`);
  reporter.push({
    type: "step_finished",
    at: now(),
    step_index: 0,
    status: result.status,
    message: result.message,
  });
  options.log(`session ${job.execution_id} ended ${result.status} (${result.reason})`);
  return { status: result.status, reason: result.reason };
}

type SessionOutcome = AppiumStepResult["outcome"] & { reason: string };

/** Tells the server the session could not be created (so the waiting client hears why), and says so. */
async function refuse(
  job: AgentJob,
  run: AppiumJobRun,
  log: (line: string) => void,
  message: string,
  reason: string,
): Promise<SessionOutcome> {
  log(`appium session not created: ${message}`);
  await run.options.client.agent
    .reportSession(job.lease_id, { status: "failed", error: "session not created", message })
    .catch((error: Error) => log(`could not report the session failed: ${error.message}`));
  return { status: "errored", message: `session not created: ${message}`, reason };
}

async function session(
  job: AgentJob,
  run: AppiumJobRun,
  log: (line: string) => void,
): Promise<SessionOutcome> {
  const services = run.options.appium;
  if (!services) {
    return refuse(
      job,
      run,
      log,
      "this agent does not offer Appium sessions (--appium)",
      "session_not_created",
    );
  }
  let step: ReturnType<typeof readAppiumStep>;
  try {
    step = readAppiumStep(job.plan.steps[0]);
  } catch (error) {
    return refuse(job, run, log, (error as Error).message, "session_not_created");
  }
  const workDir = path.join(run.jobDir, "step-1");
  await mkdir(workDir, { recursive: true });
  const device = job.device ?? null;

  // The session's own stop: the job's, or its device gone (checked below while the session runs).
  const sessionStop = new AbortController();
  const forward = () => sessionStop.abort(run.stop.reason);
  if (run.stop.aborted) forward();
  else run.stop.addEventListener("abort", forward, { once: true });
  const deviceLog = (stream: "stdout" | "stderr" | "agent", line: string) =>
    run.reporter.push({ type: "log", at: now(), stream, line });
  const ctx = stepContext(job, run, workDir, device, sessionStop.signal, deviceLog);
  const adb =
    device?.platform === "android"
      ? new Adb(device.serial, { workDir, signal: sessionStop.signal, log: deviceLog })
      : null;
  const tools =
    device?.platform === "ios"
      ? new XcodeTools({ workDir, signal: sessionStop.signal, log: deviceLog })
      : null;
  let deviceWatch: NodeJS.Timeout | undefined;
  try {
    // The version's binary, installed as a device step installs it; its local file becomes `appium:app`.
    let installedAppPath: string | null = null;
    let iosDevice: IosDevice | null = null;
    if (hasApp(job) && device) {
      const installed = await install(job, ctx, adb, tools, workDir);
      if ("refused" in installed) {
        return refuse(
          job,
          run,
          log,
          installed.refused,
          installed.lost ? "device_lost" : "session_not_created",
        );
      }
      installedAppPath = installed.path;
      iosDevice = installed.iosDevice;
    }
    if (tools && device && !iosDevice) iosDevice = await IosDevice.find(device.serial, tools, workDir);

    // The device log and the video for the session's whole life (record_video: true unless the client said not).
    const video = step.options?.record_video === false ? "never" : "always";
    const captures = adb
      ? await startCaptures({ logcat: true, record_video: video, screenshot_on_failure: false }, ctx, adb)
      : iosDevice?.kind === "simulator" && tools && device
        ? await startSimulatorCaptures({ logcat: true, record_video: video }, ctx, tools, device.serial)
        : null;

    const present = adb ? () => adb.present() : iosDevice ? () => (iosDevice as IosDevice).present() : null;
    if (present) {
      let checking = false;
      deviceWatch = setInterval(() => {
        if (checking || sessionStop.signal.aborted) return;
        checking = true;
        void present()
          .then((here) => {
            if (!here && !sessionStop.signal.aborted) {
              log(`device ${device?.serial} was lost during the session`);
              sessionStop.abort("device_lost");
            }
          })
          .finally(() => {
            checking = false;
          });
      }, services.deviceCheckMs ?? DEFAULT_DEVICE_CHECK_MS);
    }

    let result: AppiumStepResult;
    try {
      result = await runAppiumStep(
        {
          step,
          device: device && { serial: device.serial, platform: device.platform },
          installedAppPath,
          dir: run.artifactsDir,
          agent: services.agent,
        },
        {
          reportReady: (readiness) => run.options.client.agent.reportSession(job.lease_id, readiness),
          serveCommands: (session) => services.registry.serve(job.execution_id, session),
          onEnded: (reason) => services.ended(job.execution_id, reason),
          signal: sessionStop.signal,
          log,
        },
      );
    } finally {
      clearInterval(deviceWatch);
      await captures?.stop();
    }
    // The video is kept whatever the end (record_video decided whether there is one).
    if (adb && captures && "logcat" in captures) await captures.collect(true, [], false);
    else if (captures && "logArtifact" in captures) await captures.collect(true);
    return { ...result.outcome, reason: result.reason ?? "session_not_created" };
  } finally {
    clearInterval(deviceWatch);
    run.stop.removeEventListener("abort", forward);
  }
}

type Installed = { path: string; iosDevice: IosDevice | null } | { refused: string; lost: boolean };

async function install(
  job: AppJob,
  ctx: StepContext,
  adb: Adb | null,
  tools: XcodeTools | null,
  workDir: string,
): Promise<Installed> {
  if (adb) {
    if (job.binary.metadata.format !== "apk") {
      return {
        refused: `an Android session installs an .apk; version ${job.version} is an .${job.binary.metadata.format}`,
        lost: false,
      };
    }
    let apk: string;
    try {
      apk = await apkNamed(await ctx.appPath(), workDir, job.package_name);
    } catch (error) {
      return { refused: `could not fetch the binary: ${(error as Error).message}`, lost: false };
    }
    const installed = await installApk(adb, apk, INSTALL_TIMEOUT_MS);
    if (!installed.ok) return { refused: installed.message, lost: installed.deviceLost };
    return { path: apk, iosDevice: null };
  }
  if (tools) {
    const prepared = await prepareIosDevice(ctx, tools, {
      clearPackageData: false,
      what: "an Appium session",
    });
    if ("outcome" in prepared) {
      return {
        refused: prepared.outcome.message ?? "the app was not installed",
        lost: prepared.outcome.deviceLost === true,
      };
    }
    return { path: prepared.app, iosDevice: prepared.device };
  }
  return { refused: "the session's device is neither Android nor iOS", lost: false };
}

/**
 * What the device helpers read of a step's context (the install, the captures). A session without a version
 * has no binary: its context says so where a helper would fetch one, and the helpers that need one are not
 * called for it (hasApp above).
 */
function stepContext(
  job: AgentJob,
  run: AppiumJobRun,
  workDir: string,
  device: AgentJob["device"] | null,
  signal: AbortSignal,
  log: StepContext["log"],
): StepContext {
  const { client, cache } = run.options;
  let appPath: Promise<string> | undefined;
  const binary = job.binary;
  return {
    workDir,
    artifactsDir: run.artifactsDir,
    appPath: () => {
      if (!hasApp(job)) return Promise.reject(new Error("the session names no app version"));
      appPath ??= cache.get(job.binary.sha256, (destination) =>
        client.versions.downloadBinary(job.package_name, job.version, destination).then(() => {}),
      );
      return appPath;
    },
    // Read by the install only, which a session without a version never reaches.
    binary: binary?.metadata ?? noBinary,
    binarySizeBytes: binary?.size_bytes ?? 0,
    testPackage: null,
    testPackagePath: () => Promise.reject(new Error("a session has no test package")),
    packageName: job.package_name ?? "",
    version: job.version ?? "",
    env: { ...job.env, TESTBAY_EXECUTION_ID: job.execution_id },
    device: device ?? null,
    signal,
    timeoutMs: job.plan.timeout_seconds * 1000,
    log,
    testCase: () => {},
  };
}

/** The metadata of no binary: a session without `testbay:options.app` (see stepContext). */
const noBinary: StepContext["binary"] = {
  format: "apk",
  platform: "android",
  package_name: "",
  version_name: null,
  version_code: null,
  min_sdk: null,
  target_sdk: null,
  min_os_version: null,
  abis: [],
  permissions: [],
  debuggable: false,
  display_name: null,
};
