/**
 * The xcuitest step on an iOS simulator or device (API.md §5), in the order a device needs it: unpack the
 * test package (what `xcodebuild build-for-testing` wrote) and the app; on a simulator, erase it when it is
 * shut down and its data is to be cleared, and boot it; uninstall the app to clear its data, install it; point
 * the .xctestrun at the version's app, so xcodebuild installs and tests that one (tested-app.ts); list
 * the tests (`-enumerate-tests`) so every test is accounted for; start the device log and, if asked, video; run
 * `xcodebuild test-without-building`; read the result bundle (xcresulttool) and report each test with its
 * failure's attachments (the screenshot XCUITest takes) as artifacts; rerun each failed test alone
 * (retry-failed-tests.ts), or run the batches the server hands a sharded step (shard-batches.ts), each as
 * `-only-testing:` lists. A simulator that goes away (or shuts down) and an xcodebuild that dies are
 * infrastructure errors: the run is handed back (deviceLost), as when adb loses an Android device.
 */
import { existsSync } from "node:fs";
import { copyFile, mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { XcuitestStep } from "@testbay/client";
import { testArtifactName } from "../android/artifact-names.ts";
import { testKey } from "../android/logcat-cut.ts";
import type { IosDevice } from "../apple/ios-device.ts";
import { prepareIosDevice } from "../apple/prepare-ios-device.ts";
import {
  type AttachmentsByTest,
  attachmentKey,
  exportFailureAttachments,
  readTestResults,
} from "../apple/read-xcresult.ts";
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
import { abortMessage, formatSeconds, testCasesOutcome } from "./outcome.ts";
import { stepTimeoutMs } from "./process-outcome.ts";
import { lastTries, type Rerun, retryFailedTests, type TestRef } from "./retry-failed-tests.ts";
import { type BatchRan, runShardBatches, takesBatches } from "./shard-batches.ts";
import type { StepContext, StepOutcome, TestCase } from "./step-types.ts";

/** A listing, install or uninstall that takes longer than this is stuck. */
const shortCommandMs = 300_000;

const failing = (testCase: TestCase) => testCase.status === "failed" || testCase.status === "errored";

export interface XcuitestDeps {
  /** The tools the step drives; the real xcrun and xcodebuild on PATH unless a test gives fakes. */
  tools?: XcodeTools;
}

export async function runXcuitestStep(
  step: XcuitestStep,
  ctx: StepContext,
  deps: XcuitestDeps = {},
): Promise<StepOutcome> {
  if (ctx.signal.aborted) return cancelled(ctx);
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
  const udid = ctx.device.serial;
  const timeoutMs = stepTimeoutMs(step, ctx);
  const deadline = Date.now() + timeoutMs;
  const left = () => Math.max(1, deadline - Date.now());
  const tools = deps.tools ?? new XcodeTools({ workDir: ctx.workDir, signal: ctx.signal, log: ctx.log });
  const lost = (message: string): StepOutcome => ({
    status: "errored",
    message: `device ${udid} was lost: ${message}`,
    deviceLost: true,
  });

  // 1. The test package, unpacked whole (the xctestrun's paths are relative to it).
  let xctestrun: string;
  try {
    const tests = await unpackTestPackage(
      await ctx.testPackagePath(),
      path.join(ctx.workDir, "tests"),
      ctx.signal,
    );
    if ("error" in tests) return errored(tests.error);
    xctestrun = tests.path;
  } catch (error) {
    return errored(`could not fetch the test package: ${(error as Error).message}`);
  }
  if (ctx.signal.aborted) return cancelled(ctx);

  // 2. The device: found, cleared if asked, booted, the app installed.
  const prepared = await prepareIosDevice(ctx, tools, {
    clearPackageData: step.clear_package_data === true,
    what: "xcuitest",
  });
  if ("outcome" in prepared) return prepared.outcome;
  const device = prepared.device;
  // The version's app is the one tested, whatever copy of it (if any) the test package holds (tested-app.ts).
  const pointed = await pointXctestrunAtApp(xctestrun, {
    appPath: prepared.app,
    bundleId: ctx.packageName,
    workDir: path.join(ctx.workDir, "tested-app"),
    signal: ctx.signal,
  });
  if ("error" in pointed) return errored(pointed.error);
  for (const change of pointed.changes) ctx.log("agent", change);

  // 3. The tests, listed without running them: the whole set, so a crash cannot make tests go missing.
  const target: XcodebuildTarget = { xctestrun, udid };
  const filters: TestSelection = { onlyTesting: step.only_testing, skipTesting: step.skip_testing };
  const listingFile = path.join(ctx.workDir, "tests-listed.json");
  const listing = await tools.run(
    "xcodebuild",
    enumerateTestsArgs(target, listingFile, filters),
    Math.min(left(), shortCommandMs),
  );
  if (ctx.signal.aborted) return cancelled(ctx);
  let listed: TestRef[] | null = null;
  if (listing.ok && existsSync(listingFile)) {
    const parsed = parseEnumeration(await readFile(listingFile, "utf8"));
    if ("error" in parsed) return errored(parsed.error);
    listed = parsed.tests;
  } else if (!(await device.present())) {
    return lost(`listing the tests failed: ${lastLine(listing)}`);
  }
  const sharded = takesBatches(step, ctx.shard);
  if (listed === null) {
    // -enumerate-tests came with Xcode 16: before it, a whole run still works, a sharded one cannot.
    const why = `listing the tests failed (xcodebuild -enumerate-tests needs Xcode 16): ${lastLine(listing)}`;
    if (sharded) return errored(why);
    ctx.log("agent", `${why}; running without a listing`);
  } else {
    if (listed.length === 0)
      return errored("the test package has no tests that match the step's only/skip testing");
    ctx.log("agent", `${listed.length} tests listed in ${path.basename(xctestrun)}`);
  }

  // 4. Captures (simulator only), then the runs: the whole listing, or batch after batch; then each failed
  // test again alone when the plan asks for it.
  const captures = device.kind === "simulator" ? await startSimulatorCaptures(step, ctx, tools, udid) : null;
  if (device.kind === "physical") ctx.log("agent", "no device log or video on a physical device");
  const retries = step.retry_failed_tests ?? 0;
  const reported: TestCase[] = [];
  const report = (testCase: TestCase) => {
    reported.push(testCase);
    ctx.testCase(testCase);
  };
  let runs = 0;
  const run = (selection: TestSelection, retry: number, only: ReadonlySet<string> | null) =>
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
      retry: retries > 0 ? retry : undefined,
      only,
      report,
      timeoutMs: left(),
      lost,
    });

  const runList = async (
    selection: TestSelection,
    expected: readonly TestRef[],
    only: ReadonlySet<string> | null,
  ): Promise<ListRan> => {
    const first = await run(selection, 0, only);
    if ("stop" in first) return first;
    for (const test of expected) {
      if (first.seen.has(testKey(test.classname, test.name))) continue;
      const missing: TestCase = {
        classname: test.classname,
        name: test.name,
        status: "errored",
        duration_ms: null,
        message: `did not run: ${first.why}`,
        details: null,
        ...(retries > 0 ? { retry: 0 } : {}),
      };
      first.cases.push(missing);
      report(missing);
    }
    let final = first.cases;
    let end: StepOutcome | null = first.timedOut
      ? errored(`timed out after ${formatSeconds(timeoutMs)}`)
      : null;
    if (retries > 0 && end === null) {
      const done = await retryFailedTests(final, retries, async (test, retry): Promise<Rerun> => {
        if (ctx.signal.aborted) return { stop: cancelled(ctx) };
        const key = testKey(test.classname, test.name);
        ctx.log("agent", `running ${key} again alone (retry ${retry} of ${retries})`);
        const rerun = await run({ exact: [test], skipTesting: step.skip_testing }, retry, new Set([key]));
        if ("stop" in rerun) return rerun;
        let tried = rerun.cases.find((c) => testKey(c.classname, c.name) === key);
        if (!tried) {
          tried = {
            ...test,
            status: "errored",
            duration_ms: null,
            message: `did not run: ${rerun.why}`,
            details: null,
            retry,
          };
          report(tried);
        }
        return rerun.timedOut ? { stop: errored(`timed out after ${formatSeconds(timeoutMs)}`) } : { tried };
      });
      if (done.stopped?.deviceLost || done.stopped?.status === "cancelled") return { stop: done.stopped };
      final = done.final;
      if (done.reruns > 0) {
        const flaky = final.filter((c) => c.status === "passed" && (c.retry ?? 0) > 0);
        ctx.log("agent", `${done.reruns} reruns; ${flaky.length} tests passed on a rerun (flaky)`);
      }
      end = done.stopped;
    }
    // xcodebuild that failed without a failing test to show for it (a runner that would not start, a
    // bundle xcresulttool could not read) errors the step, unless reruns made every test pass.
    const crashed = first.crashed !== null && (retries === 0 || final.some(failing)) ? first.crashed : null;
    return { final, end, crashed };
  };

  const stopWith = async (outcome: StepOutcome) => {
    await captures?.stop();
    await captures?.collect(false);
    return outcome;
  };
  const finish = async (done: ReadonlyArray<ListDone>) => {
    const end = done.find((r) => r.end !== null)?.end ?? null;
    const final = done.flatMap((r) => r.final);
    await captures?.stop();
    await captures?.collect(end !== null || reported.some(failing));
    if (end) return end;
    const crashed = done.find((r) => r.crashed !== null)?.crashed;
    if (crashed) return errored(crashed);
    return testCasesOutcome(retries > 0 ? [...lastTries(final).values()] : final);
  };

  if (!sharded || listed === null) {
    const ran = await runList(filters, listed ?? [], null);
    return "stop" in ran ? stopWith(ran.stop) : finish([ran]);
  }
  const shard = ctx.shard;
  if (shard === undefined) return stopWith(errored("a sharded step needs its shard"));
  const done: ListDone[] = [];
  const batches = await runShardBatches(
    shard,
    listed,
    (line) => ctx.log("agent", line),
    async (batch): Promise<BatchRan> => {
      if (ctx.signal.aborted) return { stop: cancelled(ctx) };
      if (batch.tests.length === 0) return { ran: true };
      const keys = new Set(batch.tests.map((t) => testKey(t.classname, t.name)));
      const ran = await runList({ exact: batch.tests, skipTesting: step.skip_testing }, batch.tests, keys);
      if ("stop" in ran) return ran;
      done.push(ran);
      return { ran: true, last: ran.end !== null };
    },
  );
  if (batches.stopped?.deviceLost || batches.stopped?.status === "cancelled")
    return stopWith(batches.stopped);
  if (batches.stopped) {
    // A server call failed: what ran is reported, and the step errors so the run is not taken as complete.
    await finish(done);
    return batches.stopped;
  }
  return finish(done);
}

interface ListDone {
  /** Each test's tries (the last try of each when the step makes retries). */
  final: TestCase[];
  /** An outcome that ends the step whatever the tests say: out of time. */
  end: StepOutcome | null;
  /** Why the step errors although the tests may say otherwise, else null. */
  crashed: string | null;
}

type ListRan = { stop: StepOutcome } | ListDone;

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
  timeoutMs: number;
  lost(message: string): StepOutcome;
}

type Ran =
  | { stop: StepOutcome }
  | {
      /** What this run reported, in order. */
      cases: TestCase[];
      /** Tests (testKey) the bundle reported. */
      seen: Set<string>;
      /** Why tests it did not report did not run. */
      why: string;
      timedOut: boolean;
      /** xcodebuild failed and no failing test explains it: why, else null. */
      crashed: string | null;
    };

/**
 * One `xcodebuild test-without-building` run and its result bundle: each test case reported with, when it
 * failed, its attachments (copied into the artifacts as screenshots), the device log and the video.
 */
async function runXcodebuild(options: RunOptions): Promise<Ran> {
  const { ctx, tools, device, retry, only } = options;
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
  if (result.aborted) return { stop: cancelled(ctx) };
  if (result.spawnError !== null)
    return { stop: errored(`xcodebuild could not start: ${result.spawnError}`) };
  const said = lastLine(result);
  if (!result.ok && !result.timedOut && !(await device.present())) {
    return { stop: options.lost(`the simulator shut down or went away during the run: ${said}`) };
  }
  if (result.exitCode === null && !result.timedOut) {
    // Killed by a signal from outside (not our time limit, not a cancel): the host took it, not the tests.
    return { stop: options.lost(`xcodebuild was killed by ${result.signal ?? "a signal"}`) };
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
    const withArtifacts = failing(testCase) ? await withCaptures(testCase, attachments, options) : testCase;
    cases.push(withArtifacts);
    options.report(withArtifacts);
  }
  const why = result.timedOut
    ? `timed out after ${formatSeconds(options.timeoutMs)}`
    : "error" in results
      ? `${results.error} (xcodebuild: ${said})`
      : `xcodebuild did not run it (${said})`;
  const crashed =
    !result.ok && !result.timedOut && !cases.some(failing)
      ? `xcodebuild failed: ${"error" in results ? why : said}`
      : null;
  return { cases, seen, why, timedOut: result.timedOut, crashed };
}

/** A failed test case with its attachments copied into the artifacts, the device log and the video named. */
async function withCaptures(
  testCase: TestCase,
  attachments: AttachmentsByTest,
  options: RunOptions,
): Promise<TestCase> {
  const artifacts: string[] = [];
  const folder = options.captures?.folder ?? `device-${options.device.udid}`;
  const dot = testCase.classname.indexOf(".");
  const className = dot > 0 ? testCase.classname.slice(dot + 1) : testCase.classname;
  const files = attachments.get(attachmentKey(className, testCase.name)) ?? [];
  // The failure's own screenshot first, then whatever else the test attached.
  const ordered = [...files].sort(
    (a, b) => Number(b.associatedWithFailure) - Number(a.associatedWithFailure),
  );
  for (const [index, attachment] of ordered.entries()) {
    const extension = path.extname(attachment.file).slice(1).toLowerCase() || "bin";
    const name = testArtifactName(
      `${folder}/screenshots`,
      testCase.classname,
      index === 0 ? testCase.name : `${testCase.name}.${index + 1}`,
      extension,
      testCase.retry ?? 0,
    );
    try {
      await mkdir(path.dirname(path.join(options.ctx.artifactsDir, name)), { recursive: true });
      await copyFile(attachment.file, path.join(options.ctx.artifactsDir, name));
      artifacts.push(name);
    } catch (error) {
      options.ctx.log(
        "agent",
        `attachment ${path.basename(attachment.file)} not kept: ${(error as Error).message}`,
      );
    }
  }
  if (options.captures?.logArtifact) artifacts.push(options.captures.logArtifact);
  // Kept whenever a test failed (on_failure) or always: a failure can name it now.
  if (options.captures?.videoArtifact) artifacts.push(options.captures.videoArtifact);
  return { ...testCase, artifacts };
}

function errored(message: string): StepOutcome {
  return { status: "errored", message };
}

function cancelled(ctx: StepContext): StepOutcome {
  return { status: "cancelled", message: abortMessage(ctx.signal) };
}
