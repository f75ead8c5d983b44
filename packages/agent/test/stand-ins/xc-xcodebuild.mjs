// `xcodebuild test-without-building -xctestrun F -destination id=UDID -resultBundlePath P [-only-testing:…]
// [-skip-testing:…]` and `… -enumerate-tests -test-enumeration-format json [-test-enumeration-output-path F]`.
// It reads the xctestrun (XML plist, FormatVersion 1: one top-level dict per target ordered by RunOrder;
// FormatVersion 2: TestConfigurations[].TestTargets[]; keys per man xcodebuild.xctestrun), boots a shut-down
// simulator as xcodebuild does, installs the test host (the UI tests' Runner.app, or the app hosting unit
// tests) and the UI target app from the paths the xctestrun names, over what was installed, as it does; records
// what each target's tests ran against (test-sessions.json); then runs the suite the lab holds for each target
// (apple-lab.ts) and writes the result bundle (xc-results.mjs). Texts: xcodebuild's test log lines, "Existing
// file at -resultBundlePath" (exit 64), the crash texts: see ../fixtures/apple/SOURCES.md.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve as resolvePath } from "node:path";
import {
  applePaths,
  BOOT_MS,
  findPhysicalDevice,
  findSimulator,
  installedApps,
  logTo,
  readJson,
  setInstalledApps,
  timeScale,
  updateSimulator,
  writeJson,
  xcodeVersion,
} from "./apple-state.mjs";
import { png } from "./screencap.mjs";
import { appleJson, readAppBundle, uuidFrom } from "./xc-common.mjs";
import { parsePlist } from "./xc-plist.mjs";
import { attachmentsDir, createBundle, saveResults } from "./xc-results.mjs";

function parseArgs(argv) {
  const o = { only: [], skip: [], action: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "test-without-building" || a === "test" || a === "build-for-testing") o.action = a;
    else if (a === "-xctestrun") o.xctestrun = argv[++i];
    else if (a === "-destination") o.destination = argv[++i];
    else if (a === "-resultBundlePath") o.resultBundle = argv[++i];
    else if (a === "-enumerate-tests") o.enumerate = true;
    else if (a === "-test-enumeration-format") o.format = argv[++i];
    else if (a === "-test-enumeration-style") o.style = argv[++i];
    else if (a === "-test-enumeration-output-path") o.output = argv[++i];
    else if (a.startsWith("-only-testing:")) o.only.push(a.slice("-only-testing:".length));
    else if (a === "-only-testing") o.only.push(argv[++i]);
    else if (a.startsWith("-skip-testing:")) o.skip.push(a.slice("-skip-testing:".length));
    else if (a === "-skip-testing") o.skip.push(argv[++i]);
    else if (
      a === "-parallel-testing-enabled" ||
      a === "-test-timeouts-enabled" ||
      a === "-collect-test-diagnostics"
    )
      i++;
    else if (a === "-quiet") o.quiet = true;
    else o.unknown = a;
  }
  return o;
}

function usageError(message) {
  process.stderr.write(`xcodebuild: error: ${message}\n`);
  return 64;
}

/** "T", "T/C", "T/C/m" or "T/C/m()": a test matches when the given identifier is its prefix (by path parts). */
function matches(identifier, test) {
  const parts = identifier.replace(/\(\)$/, "").split("/").filter(Boolean);
  const own = [test.target, test.class, test.method];
  return parts.length > 0 && parts.every((p, i) => own[i] === p);
}

function readTargets(xctestrunPath) {
  const plist = parsePlist(readFileSync(xctestrunPath, "utf8"));
  const version = plist.__xctestrun_metadata__?.FormatVersion ?? 1;
  const testRoot = dirname(resolvePath(xctestrunPath));
  let planName = basename(xctestrunPath)
    .replace(/\.xctestrun$/, "")
    .replace(/_iphone.*$/, "");
  let targets;
  if (version >= 2) {
    planName = plist.TestPlan?.Name ?? planName;
    targets = (plist.TestConfigurations?.[0]?.TestTargets ?? []).map((t) => ({
      ...t,
      name: t.BlueprintName,
    }));
  } else {
    targets = Object.entries(plist)
      .filter(([key]) => key !== "__xctestrun_metadata__")
      .map(([key, t]) => ({ ...t, name: t.BlueprintName ?? key }))
      .sort((a, b) => (a.RunOrder ?? 0) - (b.RunOrder ?? 0));
  }
  return {
    planName,
    targets: targets.map((t) => {
      const host = t.TestHostPath ? t.TestHostPath.replace("__TESTROOT__", testRoot) : undefined;
      const expand = (p) => p?.replace("__TESTROOT__", testRoot).replace("__TESTHOST__", host ?? testRoot);
      return {
        name: t.name,
        ui: t.IsUITestBundle === true || t.UITargetAppPath !== undefined,
        host,
        bundle: expand(t.TestBundlePath),
        uiTargetApp: expand(t.UITargetAppPath),
        uiTargetBundleId: t.UITargetAppBundleIdentifier,
        onlyIds: t.OnlyTestIdentifiers,
        skipIds: t.SkipTestIdentifiers ?? [],
      };
    }),
  };
}

function suiteTests(target, suites, language) {
  const suite = suites[target.name];
  if (!suite) return [];
  return suite.tests.map((t) => ({
    ...t,
    target: target.name,
    swift: (t.language ?? suite.language ?? language) !== "objc",
  }));
}

function selected(target, tests, options) {
  return tests.filter((test) => {
    const rel = (id) => matches(`${target.name}/${id}`, test);
    if (target.onlyIds && !target.onlyIds.some(rel)) return false;
    if (target.skipIds.some(rel)) return false;
    if (options.only.length > 0 && !options.only.some((id) => matches(id, test))) return false;
    if (options.skip.some((id) => matches(id, test))) return false;
    return true;
  });
}

function destinationId(spec) {
  const m = /(?:^|,)id=([^,]+)/.exec(spec ?? "");
  return m ? m[1] : undefined;
}

function clock(date = new Date()) {
  const p = (n, w = 2) => String(n).padStart(w, "0");
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())} ${p(date.getHours())}:${p(
    date.getMinutes(),
  )}:${p(date.getSeconds())}.${p(date.getMilliseconds(), 3)}`;
}

function out(line) {
  process.stdout.write(`${line}\n`);
}

/** XCTest's suite summary: "\t Executed 3 tests, with 1 test skipped and 1 failure (0 unexpected) in X (Y) seconds". */
function executed({ count, skipped, failures, seconds }, overhead) {
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const skips = skipped > 0 ? `${plural(skipped, "test")} skipped and ` : "";
  return `\t Executed ${plural(count, "test")}, with ${skips}${plural(failures, "failure")} (0 unexpected) in ${seconds.toFixed(3)} (${(seconds + overhead).toFixed(3)}) seconds`;
}

/** How the n-th run (1-based) of a test ends. */
function outcomeOf(test, run) {
  if (Array.isArray(test.outcomes) && test.outcomes.length > 0) {
    return test.outcomes[Math.min(run, test.outcomes.length) - 1];
  }
  return test.outcome ?? "pass";
}

function enumerate(options, targets, suites, planName) {
  const enabled = [];
  for (const target of targets) {
    for (const test of selected(target, suiteTests(target, suites), options)) {
      enabled.push({ identifier: `${test.target}/${test.class}/${test.method}` });
    }
  }
  if ((options.format ?? "text") === "json") {
    const doc = { errors: [], values: [{ disabledTests: [], enabledTests: enabled, testPlan: planName }] };
    if (options.output) writeFileSync(options.output, appleJson(doc));
    else process.stdout.write(appleJson(doc));
  } else {
    const text = `${enabled.map((t) => t.identifier).join("\n")}\n`;
    if (options.output) writeFileSync(options.output, text);
    else process.stdout.write(text);
  }
  return 0;
}

/**
 * Waits `ms` of device time, watching for the simulator to go (shut down or crashed by the lab). Returns
 * "crash" when it went.
 */
async function deviceWait(ms, device) {
  const until = Date.now() + ms;
  for (;;) {
    if (device.simulator) {
      if (existsSync(applePaths.crash(device.id))) return "crash";
      if (findSimulator(device.id)?.state !== "Booted") return "crash";
    } else if (findPhysicalDevice(device.id)?.connected === false) {
      // A device unplugged (lab.disconnect) in the middle of a test ends the run as a crash does.
      return "crash";
    }
    const left = until - Date.now();
    if (left <= 0) return "ok";
    await new Promise((resolve) => setTimeout(resolve, Math.min(left, 15)));
  }
}

export async function xcodebuild(argv) {
  const options = parseArgs(argv);
  if (options.enumerate && xcodeVersion() < 16) {
    // -enumerate-tests came with Xcode 16.
    process.stderr.write("xcodebuild: error: invalid option '-enumerate-tests'\n");
    return 64;
  }
  if (options.action !== "test-without-building") {
    process.stderr.write(
      `stand-in xcodebuild: unsupported: ${options.action ?? "no action"} (only test-without-building)\n`,
    );
    return 1;
  }
  if (options.unknown) return usageError(`invalid option '${options.unknown}'`);
  if (!options.xctestrun)
    return usageError("The test action requires -xctestrun when used with test-without-building.");
  if (!existsSync(options.xctestrun)) {
    process.stderr.write(
      `xcodebuild: error: The file “${basename(options.xctestrun)}” couldn’t be opened because there is no such file.\n`,
    );
    return 66;
  }
  const id = destinationId(options.destination);
  const simulator = id ? findSimulator(id) : undefined;
  const physical = id && !simulator ? findPhysicalDevice(id) : undefined;
  if (!simulator && !(physical && physical.connected !== false)) {
    // Wording and exit status as recorded (appium/appium#13267, Carthage/Carthage#950); the list of available
    // destinations that follows is left out.
    process.stderr.write(
      `xcodebuild: error: Unable to find a destination matching the provided destination specifier:\n\t\t{ id:${id ?? ""} }\n\n\tThe requested device could not be found because no available devices matched the request.\n\n`,
    );
    return 70;
  }
  if (!options.enumerate && !options.resultBundle) {
    // Not an error for the real tool (it picks a path in DerivedData); the agent always names one.
    options.resultBundle = join(dirname(resolvePath(options.xctestrun)), `Test-${Date.now()}.xcresult`);
  }
  if (!options.enumerate && existsSync(options.resultBundle)) {
    return usageError(`Existing file at -resultBundlePath "${options.resultBundle}"`);
  }
  let plan;
  try {
    plan = readTargets(options.xctestrun);
  } catch (error) {
    process.stderr.write(`xcodebuild: error: Unable to read the xctestrun file: ${error.message}\n`);
    return 65;
  }
  const suites = readJson(applePaths.suites(), {});
  const device = simulator
    ? { simulator: true, id: simulator.udid, record: simulator, speed: simulator.speed ?? 1 }
    : { simulator: false, id: physical.identifier, record: physical, speed: physical.speed ?? 1 };

  if (!options.quiet) {
    out(
      `Command line invocation:\n    /Applications/Xcode.app/Contents/Developer/usr/bin/xcodebuild ${argv.join(" ")}\n`,
    );
  }
  // A shut-down simulator is booted by xcodebuild itself before it installs anything.
  if (device.simulator && findSimulator(device.id).state === "Shutdown") {
    const now = Date.now();
    updateSimulator(device.id, {
      state: "Booted",
      lastBootedAt: new Date(now).toISOString().replace(/\.\d+Z$/, "Z"),
    });
    await new Promise((resolve) => setTimeout(resolve, (BOOT_MS / device.speed) * timeScale()));
  }
  if (options.enumerate) return enumerate(options, plan.targets, suites, plan.planName);
  return runTests(options, plan, suites, device);
}

function installFromBundle(device, path) {
  const app = readAppBundle(path);
  if (app.error) return app;
  const apps = installedApps(device.id);
  apps[app.bundleId] = {
    bundleId: app.bundleId,
    name: app.name,
    version: app.version,
    build: app.build,
    path: app.path,
    installs: (apps[app.bundleId]?.installs ?? 0) + 1,
    installedBy: "xcodebuild",
    installedAt: Date.now(),
  };
  setInstalledApps(device.id, apps);
  return app;
}

function sourceFile(test) {
  return test.file ?? `/Users/testbay/src/${test.target}/${test.class}.swift`;
}

async function runTests(options, plan, suites, device) {
  const bundle = resolvePath(options.resultBundle);
  createBundle(bundle);
  out(`Writing result bundle at path:\n\t${bundle}\n`);
  const record = device.record;
  const results = {
    version: 1,
    planName: plan.planName,
    startTime: Date.now() / 1000,
    finishTime: null,
    device: {
      architecture: "arm64",
      deviceId: record.udid,
      deviceName: record.name,
      modelName: record.model ?? record.name,
      osBuildNumber: record.osBuild ?? "22A3354",
      osVersion: record.osVersion ?? "18.0",
      platform: device.simulator ? "iOS Simulator" : "iOS",
    },
    targets: [],
  };
  const problems = [];
  const failing = [];
  let crashed = null;
  const runs = readJson(applePaths.testRuns(device.id), {});
  const sessionTargets = [];
  const sessions = readJson(applePaths.testSessions(device.id), []);
  sessions.push({ at: Date.now(), xctestrun: resolvePath(options.xctestrun), targets: sessionTargets });
  writeJson(applePaths.testSessions(device.id), sessions);
  const runnerPid = 30000 + (process.pid % 9999);

  const all = { count: 0, skipped: 0, failures: 0, seconds: 0 };
  out(`Test Suite 'All tests' started at ${clock()}.`);
  for (const target of plan.targets) {
    const tests = selected(target, suiteTests(target, suites), options);
    if (tests.length === 0 && (options.only.length > 0 || !suites[target.name])) continue;
    const runnerName = target.ui
      ? `${target.name}-Runner`
      : basename(target.host ?? target.name).replace(/\.app$/, "");
    // xcodebuild installs the test host (and, for UI tests, the app under test from the test products).
    const host = target.host ? installFromBundle(device, target.host) : { error: "not-found" };
    if (host.error) {
      problems.push(
        `${runnerName} encountered an error (Failed to install or launch the test runner. (Underlying Error: The file “${basename(target.host ?? runnerName)}” couldn’t be opened because there is no such file.))`,
      );
      continue;
    }
    let appUnderTest = null;
    if (target.ui && target.uiTargetApp) {
      const app = installFromBundle(device, target.uiTargetApp);
      if (app.error) {
        problems.push(
          `${runnerName} encountered an error (Failed to install the app under test. (Underlying Error: The file “${basename(target.uiTargetApp)}” couldn’t be opened because there is no such file.))`,
        );
        continue;
      }
      appUnderTest = app;
    } else if (target.ui && target.uiTargetBundleId) {
      const installed = installedApps(device.id)[target.uiTargetBundleId];
      appUnderTest = installed
        ? { bundleId: installed.bundleId, name: installed.name }
        : { missing: target.uiTargetBundleId };
    }
    if (!target.bundle || !existsSync(target.bundle)) {
      // The test bundle is loaded from TestBundlePath (inside the host for `__TESTHOST__/PlugIns/…`); the bundle
      // text as xctest logs it (CocoaPods/CocoaPods#7178), in the form of the other "encountered an error" lines.
      const bundleName = basename(target.bundle ?? `${target.name}.xctest`).replace(/\.xctest$/, "");
      problems.push(
        `${runnerName} encountered an error (Failed to load the test bundle. (Underlying Error: The bundle “${bundleName}” couldn’t be loaded because its executable couldn’t be located. Try reinstalling the bundle.))`,
      );
      continue;
    }
    // What the tests run against: the app installed on the device now, by the bundle ID they drive (UI tests)
    // or are hosted in (unit tests), as a session record (lab.testSessions).
    const testedId = target.ui ? (appUnderTest?.bundleId ?? target.uiTargetBundleId) : host.bundleId;
    const tested = testedId ? installedApps(device.id)[testedId] : undefined;
    sessionTargets.push({
      name: target.name,
      app: tested
        ? { bundleId: tested.bundleId, version: tested.version, build: tested.build, path: tested.path }
        : null,
    });
    writeJson(applePaths.testSessions(device.id), sessions);
    const entry = { name: target.name, kind: target.ui ? "UI test bundle" : "Unit test bundle", tests: [] };
    results.targets.push(entry);
    saveResults(bundle, results);
    out(`Test Suite '${target.name}.xctest' started at ${clock()}.`);
    const byClass = new Map();
    for (const test of tests) byClass.set(test.class, [...(byClass.get(test.class) ?? []), test]);
    const bundle_ = { count: 0, skipped: 0, failures: 0, seconds: 0 };
    for (const [className, classTests] of byClass) {
      out(`Test Suite '${className}' started at ${clock()}.`);
      let count = 0;
      let failures = 0;
      let skipped = 0;
      let seconds = 0;
      for (const test of classTests) {
        const name = `-[${test.target}.${test.class} ${test.method}]`;
        const key = `${test.target}/${test.class}/${test.method}`;
        const run = (runs[key] ?? 0) + 1;
        if (Array.isArray(test.outcomes)) {
          runs[key] = run;
          writeJson(applePaths.testRuns(device.id), runs);
        }
        let outcome = outcomeOf(test, run);
        out(`Test Case '${name}' started.`);
        const appName = appUnderTest?.name ?? runnerName;
        const pid = 40000 + (uuidFrom(key).charCodeAt(0) % 50) * 100;
        if (appUnderTest?.missing) outcome = "not-installed";
        if (outcome !== "not-installed") {
          for (const line of test.log ?? []) logTo(device.id, appName, pid, line);
        }
        const startedAt = Date.now();
        const waited = await deviceWait(((test.duration_ms ?? 100) / device.speed) * timeScale(), device);
        if (waited === "crash" || outcome === "crash") outcome = "crash";
        // What really elapsed, as a device reports it (FAKE_XCODE_TIME_SCALE shortens the run, not the report).
        const duration = (Date.now() - startedAt) / 1000;
        const shown = duration.toFixed(3);
        const method = test.swift ? `${test.method}()` : test.method;
        const resultTest = {
          className: test.class,
          method,
          identifier: `${test.class}/${method}`,
          result: "Passed",
          durationSeconds: duration,
          failureMessages: [],
          attachments: [],
        };
        const line = test.line ?? 42;
        if (outcome === "crash") {
          rmSync(applePaths.crash(device.id), { force: true });
          if (device.simulator)
            updateSimulator(device.id, {
              state: "Shutdown",
              crashes: (findSimulator(device.id)?.crashes ?? 0) + 1,
            });
          resultTest.result = "Failed";
          resultTest.failureMessages.push("Test crashed with signal kill.");
          entry.tests.push(resultTest);
          saveResults(bundle, results);
          crashed = { test, runnerName, method };
          break;
        }
        if (outcome === "pass") {
          out(`Test Case '${name}' passed (${shown} seconds).`);
        } else if (outcome === "skip") {
          const message = test.message ?? "Required API is not available for this test.";
          out(`${sourceFile(test)}:${line}: ${name} : Test skipped - ${message}`);
          out(`Test Case '${name}' skipped (${shown} seconds).`);
          resultTest.result = "Skipped";
          resultTest.failureMessages.push(`Test skipped - ${message}`);
          skipped++;
        } else if (outcome === "expected-failure") {
          const message = test.message ?? "Working on a fix for this problem.";
          out(`${sourceFile(test)}:${line}: ${name} : ${message}`);
          out(`Test Case '${name}' passed (${shown} seconds).`);
          resultTest.result = "Expected Failure";
          resultTest.failureMessages.push(message);
        } else {
          const message =
            outcome === "not-installed"
              ? `Failed to launch app with identifier: ${appUnderTest.missing}`
              : (test.message ?? "XCTAssertTrue failed");
          out(`${sourceFile(test)}:${line}: error: ${name} : ${message}`);
          out(`Test Case '${name}' failed (${shown} seconds).`);
          resultTest.result = "Failed";
          resultTest.failureMessages.push(`${basename(sourceFile(test))}:${line}: ${message}`);
          failures++;
          failing.push(`${test.class}.${method}`);
          if (target.ui) {
            // XCUITest attaches a screenshot of the screen when an assertion fails (kept: deleteOnSuccess).
            const uuid = uuidFrom(`${bundle}/${key}/${Date.now()}`);
            const [w, h] = record.screen ?? [1179, 2556];
            writeFileSync(
              join(attachmentsDir(bundle), `${uuid}.png`),
              png(
                Math.max(1, Math.round(w / 9)),
                Math.max(1, Math.round(h / 9)),
                record.screenColor ?? [200, 40, 40],
              ),
            );
            resultTest.attachments.push({
              uuid,
              file: `${uuid}.png`,
              name: `Screenshot at failure_0_${uuid}.png`,
              timestamp: Date.now() / 1000,
              failure: true,
            });
          }
        }
        entry.tests.push(resultTest);
        saveResults(bundle, results);
        count++;
        seconds += duration;
      }
      if (crashed) break;
      const verdict = failures > 0 ? "failed" : "passed";
      out(`Test Suite '${className}' ${verdict} at ${clock()}.`);
      out(executed({ count, skipped, failures, seconds }, 0.001));
      bundle_.count += count;
      bundle_.skipped += skipped;
      bundle_.failures += failures;
      bundle_.seconds += seconds;
    }
    if (crashed) break;
    out(`Test Suite '${target.name}.xctest' ${bundle_.failures > 0 ? "failed" : "passed"} at ${clock()}.`);
    out(executed(bundle_, 0.002));
    for (const key of ["count", "skipped", "failures", "seconds"]) all[key] += bundle_[key];
  }
  if (!crashed) {
    out(`Test Suite 'All tests' ${all.failures > 0 ? "failed" : "passed"} at ${clock()}.`);
    out(executed(all, 0.003));
  }
  results.finishTime = Date.now() / 1000;
  saveResults(bundle, results);
  if (crashed) {
    problems.push(
      `${crashed.test.class}.${crashed.method} encountered an error (Test crashed with signal kill.)`,
    );
    problems.push(
      `${crashed.runnerName} (${runnerPid}) encountered an error (Lost connection to the test runner. If you believe this error represents a bug, please attach the result bundle at ${bundle})`,
    );
  }
  out(`\nTest session results, code coverage, and logs:\n\t${bundle}\n`);
  if (problems.length > 0) out(`Testing failed:\n${problems.map((p) => `\t${p}`).join("\n")}\n`);
  if (failing.length > 0) out(`Failing tests:\n${failing.map((f) => `\t${f}`).join("\n")}\n`);
  if (failing.length > 0 || problems.length > 0) {
    out("** TEST EXECUTE FAILED **\n");
    return 65;
  }
  out("** TEST EXECUTE SUCCEEDED **\n");
  return 0;
}
