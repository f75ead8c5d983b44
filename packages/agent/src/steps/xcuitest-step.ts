/**
 * The xcuitest step on an iOS simulator or device, in the order a device needs it (device-step.ts): unpack
 * the test package (what `xcodebuild build-for-testing` wrote) and the app; on a simulator, erase it when it is
 * shut down and its data is to be cleared, and boot it; uninstall the app to clear its data, install it; point
 * the .xctestrun at the version's app, so xcodebuild installs and tests that one (tested-app.ts); list
 * the tests (`-enumerate-tests`) so every test is accounted for; start the device log and, if asked, video; run
 * `xcodebuild test-without-building`; read the result bundle (xcresulttool) and report each test with its
 * failure's attachments (the screenshot XCUITest takes) as artifacts; rerun each failed test alone, or run the
 * batches the server hands a sharded step (listed-tests-run.ts), each as `-only-testing:` lists. A simulator
 * that goes away (or shuts down) and an xcodebuild that dies are infrastructure errors: the run is handed back
 * (deviceLost), as when adb loses an Android device.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { XcuitestStep } from "@testbay/client";
import { testKey } from "../android/logcat-cut.ts";
import type { IosDevice } from "../apple/ios-device.ts";
import { prepareIosDevice } from "../apple/prepare-ios-device.ts";
import { exportFailureAttachments, readTestResults } from "../apple/read-xcresult.ts";
import { type SimulatorCaptures, startSimulatorCaptures } from "../apple/simulator-captures.ts";
import { pointXctestrunAtApp } from "../apple/tested-app.ts";
import { unpackTestPackage } from "../apple/unpack.ts";
import {
  enumerateTestsArgs,
  parseEnumeration,
  type TestSelection,
  testWithoutBuildingArgs,
  type XcodebuildTarget,
} from "../apple/xcodebuild-args.ts";
import { lastLine, XcodeTools } from "../apple/xcrun.ts";
import { type Prepared, runDeviceStep, type StepTime } from "./device-step.ts";
import { runListedTests, type TestsRan } from "./listed-tests-run.ts";
import { cancelled, deviceLost, errored, formatSeconds } from "./outcome.ts";
import type { TestRef } from "./retry-failed-tests.ts";
import { takesBatches } from "./shard-batches.ts";
import type { StepContext, StepOutcome, TestCase } from "./step-types.ts";
import { withAttachments } from "./xcuitest-attachments.ts";

/** A listing, install or uninstall that takes longer than this is stuck. */
const shortCommandMs = 300_000;

const failing = (testCase: TestCase) => testCase.status === "failed" || testCase.status === "errored";

export interface XcuitestDeps {
  /** The tools the step drives; the real xcrun and xcodebuild on PATH unless a test gives fakes. */
  tools?: XcodeTools;
}

interface Ready {
  device: IosDevice;
  target: XcodebuildTarget;
  filters: TestSelection;
  /** Null when this Xcode cannot list (the whole set runs then). */
  listed: TestRef[] | null;
}

export function runXcuitestStep(
  step: XcuitestStep,
  ctx: StepContext,
  deps: XcuitestDeps = {},
): Promise<StepOutcome> {
  const tools = deps.tools ?? new XcodeTools({ workDir: ctx.workDir, signal: ctx.signal, log: ctx.log });
  return runDeviceStep(step, ctx, {
    refuse() {
      if (ctx.device === null || ctx.device.platform !== "ios") {
        return errored("xcuitest needs an iOS simulator or device");
      }
      if (ctx.binary.format !== "ipa" && ctx.binary.format !== "app") {
        return errored(`xcuitest installs an .ipa or a zipped .app; this binary is an .${ctx.binary.format}`);
      }
      if (ctx.testPackage === null || ctx.testPackage.format !== "xctest") {
        const what =
          ctx.testPackage === null ? "has no test package" : "has an instrumentation APK as its test package";
        return errored(
          `version ${ctx.version} ${what}: upload the zip of what xcodebuild build-for-testing wrote (testbay upload --test-file)`,
        );
      }
      return null;
    },
    prepare: (time) => prepare(step, ctx, tools, time),
    async startCaptures({ device, target }) {
      // A physical device has no simctl to follow its log or record its screen.
      if (device.kind === "physical") {
        ctx.log("agent", "no device log or video on a physical device");
        return null;
      }
      return startSimulatorCaptures(step, ctx, tools, target.udid);
    },
    run: ({ device, target, filters, listed }, captures, time) => {
      let runs = 0;
      return runListedTests<TestSelection>(step, ctx, captures, listed, {
        whole: filters,
        alone: (test) => ({ exact: [test], skipTesting: step.skip_testing }),
        batch: async (batch) => ({ selection: { exact: batch.tests, skipTesting: step.skip_testing } }),
        run: (selection, retry, only, report) =>
          runXcodebuild({
            ctx,
            tools,
            device,
            target,
            selection,
            resultBundle: path.join(ctx.workDir, "results", `run-${++runs}.xcresult`),
            attachmentsDir: path.join(ctx.workDir, "attachments", `run-${runs}`),
            captures,
            screenshots: step.screenshot_on_failure !== false,
            retry,
            only,
            report,
            timeoutMs: time.left(),
            stepTimeoutMs: time.timeoutMs,
          }),
      });
    },
  });
}

/** The test package unpacked, the device ready with the app, the xctestrun pointed at it, the tests listed. */
async function prepare(
  step: XcuitestStep,
  ctx: StepContext,
  tools: XcodeTools,
  time: StepTime,
): Promise<Prepared<Ready>> {
  // refuse() let only an iOS device through.
  const udid = (ctx.device as NonNullable<StepContext["device"]>).serial;
  // Unpacked whole: the xctestrun's paths are relative to it.
  let xctestrun: string;
  try {
    const tests = await unpackTestPackage(
      await ctx.testPackagePath(),
      path.join(ctx.workDir, "tests"),
      ctx.signal,
    );
    if ("error" in tests) return { outcome: errored(tests.error) };
    xctestrun = tests.path;
  } catch (error) {
    return { outcome: errored(`could not fetch the test package: ${(error as Error).message}`) };
  }
  if (ctx.signal.aborted) return { outcome: cancelled(ctx.signal) };

  // The device: found, cleared if asked, booted, the app installed.
  const prepared = await prepareIosDevice(ctx, tools, {
    clearPackageData: step.clear_package_data === true,
    what: "xcuitest",
  });
  if ("outcome" in prepared) return prepared;
  const device = prepared.device;
  // The version's app is the one tested, whatever copy of it (if any) the test package holds (tested-app.ts).
  const pointed = await pointXctestrunAtApp(xctestrun, {
    appPath: prepared.app,
    bundleId: ctx.packageName,
    workDir: path.join(ctx.workDir, "tested-app"),
    signal: ctx.signal,
  });
  if ("error" in pointed) return { outcome: errored(pointed.error) };
  for (const change of pointed.changes) ctx.log("agent", change);

  // Listed without running them: the whole set, so a crash cannot make tests go missing.
  const target: XcodebuildTarget = { xctestrun, udid };
  const filters: TestSelection = { onlyTesting: step.only_testing, skipTesting: step.skip_testing };
  const listingFile = path.join(ctx.workDir, "tests-listed.json");
  const listing = await tools.run(
    "xcodebuild",
    enumerateTestsArgs(target, listingFile, filters),
    Math.min(time.left(), shortCommandMs),
  );
  if (ctx.signal.aborted) return { outcome: cancelled(ctx.signal) };
  let listed: TestRef[] | null = null;
  if (listing.ok && existsSync(listingFile)) {
    const parsed = parseEnumeration(await readFile(listingFile, "utf8"));
    if ("error" in parsed) return { outcome: errored(parsed.error) };
    listed = parsed.tests;
  } else if (!(await device.present())) {
    return { outcome: deviceLost(udid, `listing the tests failed: ${lastLine(listing)}`) };
  }
  if (listed === null) {
    // -enumerate-tests came with Xcode 16: before it, a whole run still works, a sharded one cannot.
    const why = `listing the tests failed (xcodebuild -enumerate-tests needs Xcode 16): ${lastLine(listing)}`;
    if (takesBatches(step, ctx.shard)) return { outcome: errored(why) };
    ctx.log("agent", `${why}; running without a listing`);
  } else {
    if (listed.length === 0) {
      return { outcome: errored("the test package has no tests that match the step's only/skip testing") };
    }
    ctx.log("agent", `${listed.length} tests listed in ${path.basename(xctestrun)}`);
  }
  return { ready: { device, target, filters, listed } };
}

interface RunOptions {
  ctx: StepContext;
  tools: XcodeTools;
  device: IosDevice;
  target: XcodebuildTarget;
  selection: TestSelection;
  resultBundle: string;
  attachmentsDir: string;
  captures: SimulatorCaptures | null;
  screenshots: boolean;
  /** The try's number on every test case it reports; undefined when the step makes no retries. */
  retry: number | undefined;
  /** The tests (testKey) the run is for; null: every test the bundle holds. */
  only: ReadonlySet<string> | null;
  report(testCase: TestCase): void;
  /** This run's time: what is left of the step's. */
  timeoutMs: number;
  /** The step's whole time, which a step out of time names. */
  stepTimeoutMs: number;
}

/**
 * One `xcodebuild test-without-building` run and its result bundle: each test case reported with, when it
 * failed, its attachments (copied into the artifacts as screenshots), the device log and the video.
 */
async function runXcodebuild(options: RunOptions): Promise<TestsRan> {
  const { ctx, tools, device, retry, only } = options;
  const lost = (why: string) => deviceLost(options.target.udid, why);
  await mkdir(path.dirname(options.resultBundle), { recursive: true });
  const result = await tools.run(
    "xcodebuild",
    [
      ...testWithoutBuildingArgs(options.target, options.resultBundle, options.selection),
      // Tests run on this device only: parallel testing would clone the simulator, out of the captures' sight.
      "-parallel-testing-enabled",
      "NO",
    ],
    options.timeoutMs,
  );
  if (result.aborted) return { stop: cancelled(ctx.signal) };
  if (result.spawnError !== null)
    return { stop: errored(`xcodebuild could not start: ${result.spawnError}`) };
  const said = lastLine(result);
  if (!result.ok && !result.timedOut && !(await device.present())) {
    return { stop: lost(`the simulator shut down or went away during the run: ${said}`) };
  }
  if (result.exitCode === null && !result.timedOut) {
    // Killed by a signal from outside (not our time limit, not a cancel): the host took it, not the tests.
    return { stop: lost(`xcodebuild was killed by ${result.signal ?? "a signal"}`) };
  }
  const results = existsSync(options.resultBundle)
    ? await readTestResults(tools, options.resultBundle)
    : { error: "xcodebuild wrote no result bundle" };
  const parsed = "error" in results ? [] : results.cases;
  if ("error" in results) ctx.log("agent", results.error);
  const wanted = parsed.filter((c) => only === null || only.has(testKey(c.classname, c.name)));
  const attachments =
    options.screenshots && wanted.some(failing) && existsSync(options.resultBundle)
      ? await exportFailureAttachments(tools, options.resultBundle, options.attachmentsDir, (line) =>
          ctx.log("agent", line),
        )
      : new Map();
  const cases: TestCase[] = [];
  const seen = new Set<string>();
  for (const parsedCase of wanted) {
    const key = testKey(parsedCase.classname, parsedCase.name);
    if (seen.has(key)) continue;
    seen.add(key);
    const testCase = retry === undefined ? parsedCase : { ...parsedCase, retry };
    const withArtifacts = failing(testCase)
      ? await withAttachments(testCase, attachments, options)
      : testCase;
    cases.push(withArtifacts);
    options.report(withArtifacts);
  }
  const why = result.timedOut
    ? `timed out after ${formatSeconds(options.timeoutMs)}`
    : "error" in results
      ? `${results.error} (xcodebuild: ${said})`
      : `xcodebuild did not run it (${said})`;
  // xcodebuild that failed without a failing test to show for it (a runner that would not start, a bundle
  // xcresulttool could not read) errors the step.
  const crashed =
    !result.ok && !result.timedOut && !cases.some(failing)
      ? `xcodebuild failed: ${"error" in results ? why : said}`
      : null;
  return {
    seen,
    why,
    whyAlone: why,
    timedOut: result.timedOut ? errored(`timed out after ${formatSeconds(options.stepTimeoutMs)}`) : null,
    crashed,
  };
}
