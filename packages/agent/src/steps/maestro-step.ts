/**
 * The maestro step (device-step.ts): on an Android device, installs the app first (maestro's launchApp starts
 * an installed app, it installs nothing) and clears its data if asked, starts logcat and video; writes the
 * plan's flows into the work directory and runs them with the maestro CLI, with the app's package as APP_ID
 * for the flows; ingests the JUnit report maestro writes, naming the captures on each failed flow. With
 * retry_failed_tests, each flow runs alone and a failed one again (maestro-retries.ts); a sharded step runs
 * the flows the server hands it (maestro-shards.ts).
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { MaestroStep } from "@testbay/client";
import { Adb } from "../android/adb.ts";
import { type Captures, failing, startCaptures } from "../android/device-captures.ts";
import { apkNamed } from "../android/install-apk.ts";
import { IosDevice } from "../apple/ios-device.ts";
import { prepareIosForMaestro } from "../apple/prepare-ios-device.ts";
import { XcodeTools } from "../apple/xcrun.ts";
import { applyDeviceEntrySettings } from "./device-entry-settings.ts";
import { type Prepared, runDeviceStep, type StepTime } from "./device-step.ts";
import { ingestJUnitFiles } from "./ingest-junit.ts";
import { installOnAndroid } from "./install-on-android.ts";
import { runFlowsWithRetries } from "./maestro-retries.ts";
import { runFlowBatches } from "./maestro-shards.ts";
import { errored, testCasesOutcome } from "./outcome.ts";
import { processOutcome } from "./process-outcome.ts";
import { runProcess } from "./process-runner.ts";
import { takesBatches } from "./shard-batches.ts";
import { withoutAgentSecrets } from "./shell-step.ts";
import type { StepContext, StepOutcome } from "./step-types.ts";

export const MAESTRO_REPORT = "maestro-report.xml";

export function runMaestroStep(step: MaestroStep, ctx: StepContext): Promise<StepOutcome> {
  const android = ctx.device?.platform === "android" ? ctx.device : null;
  const adb = android && new Adb(android.serial, { workDir: ctx.workDir, signal: ctx.signal, log: ctx.log });
  return runDeviceStep(step, ctx, {
    refuse: () =>
      adb && ctx.binary.format !== "apk"
        ? errored(`maestro on Android installs an .apk; this binary is an .${ctx.binary.format}`)
        : null,
    prepare: (time) => prepare(step, ctx, adb, time),
    // No screenshots: maestro's results come at the end, with no moment of failure to take one at.
    startCaptures: async () =>
      adb ? startCaptures({ ...step, screenshot_on_failure: false }, ctx, adb) : null,
    run: (_ready, captures, time) => runFlows(step, ctx, adb, captures, time),
  });
}

/** The app installed (and its data cleared when asked) on the device maestro is given. */
async function prepare(
  step: MaestroStep,
  ctx: StepContext,
  adb: Adb | null,
  time: StepTime,
): Promise<Prepared<null>> {
  if (adb) {
    // The device entry's locale and orientation first: a locale restarts the framework (device-locale.ts).
    const settings = await applyDeviceEntrySettings(ctx, adb, time);
    if (settings) return { outcome: settings };
    let apk: string;
    try {
      apk = await apkNamed(await ctx.appPath(), ctx.workDir, ctx.packageName);
    } catch (error) {
      return { outcome: errored(`could not fetch the binary: ${(error as Error).message}`) };
    }
    const installed = await installOnAndroid(adb, ctx, {
      apks: [apk],
      clearData: step.clear_package_data === true,
      left: time.left,
    });
    if (installed) return { outcome: installed };
  } else if (ctx.device?.platform === "ios") {
    const prepared = await prepareIosForMaestro(ctx, step.clear_package_data === true);
    if (prepared) return { outcome: prepared };
  } else {
    ctx.log(
      "agent",
      "no Android device assigned: maestro runs on the device it finds, with the app as installed there",
    );
  }
  return { ready: null };
}

/** The flows written and run: batch by batch when sharded, one by one with retries, else all in one run. */
async function runFlows(
  step: MaestroStep,
  ctx: StepContext,
  adb: Adb | null,
  captures: Captures | null,
  time: StepTime,
): Promise<StepOutcome> {
  // Whether the device can still run flows: a simulator that crashed is Shutdown, an infrastructure error to
  // hand back as on Android, not failed flows (maestro only says it lost its driver).
  const simulator =
    ctx.device?.platform === "ios"
      ? new IosDevice(
          ctx.device.serial,
          "simulator",
          new XcodeTools({ workDir: ctx.workDir, signal: ctx.signal, log: ctx.log }),
          ctx.workDir,
        )
      : null;
  const devicePresent = adb ? () => adb.present() : simulator ? () => simulator.present() : null;
  const flowsDir = await writeFlows(step.flows, ctx.workDir);
  const runMaestro = async (target: string, report: string) => {
    const result = await runProcess({
      command: "maestro",
      args: maestroArgs(ctx.device?.serial ?? null, report, target, { APP_ID: ctx.packageName }),
      cwd: ctx.workDir,
      // The execution's env too: maestro passes MAESTRO_* variables on to the flows.
      env: { ...withoutAgentSecrets(process.env), ...ctx.env, MAESTRO_CLI_NO_ANALYTICS: "1" },
      timeoutMs: time.left(),
      signal: ctx.signal,
      onLine: (stream, line) => ctx.log(stream, line),
    });
    return { result, ran: processOutcome(result, ctx, time.timeoutMs, "maestro") };
  };
  const retries = step.retry_failed_tests ?? 0;
  const lost = (when: string): StepOutcome => ({
    status: "errored",
    message: `device ${ctx.device?.serial} was lost ${when}`,
    deviceLost: true,
  });
  if (takesBatches(step, ctx.shard)) {
    const done = await runFlowBatches({
      ctx,
      shard: ctx.shard,
      files: step.flows.map((_, index) => flowFile(flowsDir, index)),
      flows: step.flows,
      retries,
      runMaestro,
      reportPath: (label) => join(ctx.workDir, `maestro-report-${label}.xml`),
      devicePresent,
      lost,
      failureArtifacts: captures?.logcatArtifact ? [captures.logcatArtifact] : [],
    });
    await captures?.stop();
    if ("stop" in done) {
      await captures?.collect(false, [], false);
      return done.stop;
    }
    // A lost device's run is handed back: its video is not kept.
    const failed = done.stopped !== null || done.final.some(failing);
    await captures?.collect(!done.stopped?.deviceLost && failed, [], false);
    return done.stopped ?? testCasesOutcome(done.final);
  }
  if (retries > 0) {
    return runFlowsWithRetries({
      ctx,
      captures,
      files: step.flows.map((_, index) => flowFile(flowsDir, index)),
      retries,
      runMaestro,
      reportPath: (label) => join(ctx.workDir, `maestro-report-${label}.xml`),
      devicePresent,
      lost,
    });
  }
  const report = join(ctx.workDir, MAESTRO_REPORT);
  const { result, ran } = await runMaestro(flowsDir, report);
  await captures?.stop();
  if (devicePresent && ran.status !== "passed" && ran.status !== "cancelled" && !(await devicePresent())) {
    await captures?.collect(false, []);
    return lost("during the flows");
  }
  const failedFlows = existsSync(report) && (await readFile(report, "utf8")).includes("<failure");
  const kept = (await captures?.collect(failedFlows || ran.status !== "passed", [], false)) ?? [];
  if (ran.status === "cancelled" || result.timedOut || result.spawnError !== null) return ran;
  if (!existsSync(report)) {
    return {
      status: "errored",
      message: `maestro wrote no report (${ran.message ?? "exit code 0"})`,
      exit_code: ran.exit_code ?? null,
    };
  }
  // A failed flow names the whole device log and the video kept (maestro's results come at the end, so
  // there is no moment of failure to cut them at).
  const captured = [...(captures?.logcatArtifact ? [captures.logcatArtifact] : []), ...kept];
  const reported = await ingestJUnitFiles([report], {
    ...ctx,
    testCase: (testCase) => ctx.testCase(failing(testCase) ? { ...testCase, artifacts: captured } : testCase),
  });
  if (reported.status !== "passed") return { ...reported, exit_code: ran.exit_code ?? null };
  if (ran.status !== "passed") {
    return {
      status: "errored",
      message: `maestro ended with ${ran.message} but reported no failed flow`,
      exit_code: ran.exit_code ?? null,
    };
  }
  return ran;
}

/**
 * `maestro [--device SERIAL] test --format junit --output REPORT [-e KEY=VALUE]… FLOWS_DIR` (--device is a
 * global option; -e sets a variable the flows read as ${KEY}).
 */
export function maestroArgs(
  serial: string | null,
  report: string,
  flowsDir: string,
  variables: Record<string, string> = {},
): string[] {
  const device = serial === null ? [] : ["--device", serial];
  const env = Object.entries(variables).flatMap(([key, value]) => ["-e", `${key}=${value}`]);
  return [...device, "test", "--format", "junit", "--output", report, ...env, flowsDir];
}

/** Writes flows/flow-01.yaml, flow-02.yaml… numbered in the plan's order; returns the folder. */
export async function writeFlows(flows: readonly string[], workDir: string): Promise<string> {
  const dir = join(workDir, "flows");
  await mkdir(dir, { recursive: true });
  for (const [index, flow] of flows.entries()) await writeFile(flowFile(dir, index), flow);
  return dir;
}

/** The file of the plan's flow at `index` (from 0) in the flows folder: flow-01.yaml for the first. */
export function flowFile(dir: string, index: number): string {
  return join(dir, `flow-${String(index + 1).padStart(2, "0")}.yaml`);
}
