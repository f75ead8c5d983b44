// `xcrun xcresulttool` as Xcode 16+ has it: `get test-results tests|summary --path P` print the documents of
// ../fixtures/apple/xcresulttool-tests-*.json and -summary-failed.json (same keys, same nesting: Test Plan →
// UI/Unit test bundle → Test Suite → Test Case → Failure Message), built from what the xcodebuild stand-in
// wrote into the bundle (xc-results.mjs); `export attachments --path P --output-path DIR [--test-id ID]
// [--only-failures]` copies the attachments with a manifest.json. The legacy object graph (xc-legacy.mjs) is
// refused without --legacy with Xcode 16's text (../fixtures/apple/xcresulttool-get-without-legacy.txt); with a
// lab of Xcode 15 (FAKE_XCODE_VERSION) it is the only form, and the Xcode 16 commands are unknown.
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { xcodeVersion } from "./apple-state.mjs";
import { appleJson, unsupported } from "./xc-common.mjs";
import { legacyRoot, legacyTests, refId } from "./xc-legacy.mjs";
import { attachmentsDir, durationText, loadResults } from "./xc-results.mjs";

const LEGACY_REFUSAL =
  "Error: This command is deprecated and will be removed in a future release, --legacy flag is required to use it.\n" +
  "Usage: xcresulttool get object [--legacy] --path <path> [--id <id>] [--version <version>] [--format <format>]\n" +
  "  See 'xcresulttool get object --help' for more information.\n";

function option(args, name) {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

function open(path) {
  if (!path) {
    process.stderr.write("Error: Missing expected argument '--path <path>'\n");
    return { code: 64 };
  }
  const results = existsSync(path) ? loadResults(path) : null;
  if (!results) {
    // Wording of a missing or unreadable bundle not recorded; the exit status 1 is what callers see.
    process.stderr.write(
      `Error: The file “${basename(path)}” couldn’t be opened because there is no such file.\n`,
    );
    return { code: 1 };
  }
  return { results };
}

function worst(results) {
  if (results.some((r) => r === "Failed")) return "Failed";
  if (results.length > 0 && results.every((r) => r === "Skipped")) return "Skipped";
  return "Passed";
}

function testNodes(results) {
  const project = results.planName;
  const bundles = results.targets.map((target) => {
    const byClass = new Map();
    for (const t of target.tests) byClass.set(t.className, [...(byClass.get(t.className) ?? []), t]);
    const suites = [...byClass].map(([className, tests]) => {
      const cases = tests.map((t) => ({
        ...(t.failureMessages.length > 0
          ? { children: t.failureMessages.map((m) => ({ name: m, nodeType: "Failure Message" })) }
          : {}),
        duration: durationText(t.durationSeconds),
        durationInSeconds: t.durationSeconds,
        name: t.method,
        nodeIdentifier: t.identifier,
        nodeIdentifierURL: `test://com.apple.xcode/${project}/${target.name}/${className}/${t.method.replace(/\(\)$/, "")}`,
        nodeType: "Test Case",
        result: t.result,
      }));
      return {
        children: cases,
        name: className,
        nodeIdentifierURL: `test://com.apple.xcode/${project}/${target.name}/${className}`,
        nodeType: "Test Suite",
        result: worst(tests.map((t) => t.result)),
      };
    });
    return {
      children: suites,
      name: target.name,
      nodeIdentifierURL: `test://com.apple.xcode/${project}/${target.name}`,
      nodeType: target.kind,
      result: worst(suites.map((s) => s.result)),
    };
  });
  return [
    { children: bundles, name: project, nodeType: "Test Plan", result: worst(bundles.map((b) => b.result)) },
  ];
}

const CONFIGURATION = { configurationId: "1", configurationName: "Test Scheme Action" };

function tests(results) {
  return {
    devices: [results.device],
    testNodes: testNodes(results),
    testPlanConfigurations: [CONFIGURATION],
  };
}

function summary(results) {
  const all = results.targets.flatMap((t) => t.tests.map((test) => ({ ...test, target: t.name })));
  const count = (r) => all.filter((t) => t.result === r).length;
  const counts = {
    expectedFailures: count("Expected Failure"),
    failedTests: count("Failed"),
    passedTests: count("Passed"),
    skippedTests: count("Skipped"),
  };
  return {
    devicesAndConfigurations: [{ device: results.device, ...counts, testPlanConfiguration: CONFIGURATION }],
    environmentDescription: `${results.planName} · Built with macOS 15.0`,
    ...counts,
    finishTime: results.finishTime ?? Date.now() / 1000,
    result: counts.failedTests > 0 ? "Failed" : "Passed",
    startTime: results.startTime,
    statistics: [],
    testFailures: all
      .filter((t) => t.result === "Failed")
      .map((t, i) => ({
        failureText: (t.failureMessages[0] ?? "").replace(/^[^:\s]+\.swift:\d+: /, ""),
        targetName: t.target,
        testIdentifier: i + 1,
        testIdentifierString: t.identifier,
        testIdentifierURL: `test://com.apple.xcode/${results.planName}/${t.target}/${t.identifier.replace(/\(\)$/, "")}`,
        testName: t.method,
      })),
    title: `Test - ${results.planName}`,
    topInsights: [],
    totalTestCount: all.length,
  };
}

function exportAttachments(args) {
  const path = option(args, "--path");
  const output = option(args, "--output-path");
  if (!output) {
    process.stderr.write("Error: Missing expected argument '--output-path <output-path>'\n");
    return 64;
  }
  const opened = open(path);
  if (!opened.results) return opened.code;
  const { results } = opened;
  const testId = option(args, "--test-id");
  const onlyFailures = args.includes("--only-failures");
  mkdirSync(output, { recursive: true });
  const manifest = [];
  for (const target of results.targets) {
    for (const t of target.tests) {
      if (testId && testId !== t.identifier && testId !== `${target.name}/${t.identifier}`) continue;
      const attachments = t.attachments.filter((a) => !onlyFailures || a.failure);
      if (attachments.length === 0) continue;
      for (const a of attachments) copyFileSync(join(attachmentsDir(path), a.file), join(output, a.file));
      manifest.push({
        attachments: attachments.map((a) => ({
          configurationName: CONFIGURATION.configurationName,
          deviceId: results.device.deviceId,
          deviceName: results.device.deviceName,
          exportedFileName: a.file,
          isAssociatedWithFailure: a.failure,
          suggestedHumanReadableName: a.name,
          timestamp: a.timestamp,
        })),
        testIdentifier: t.identifier,
        testIdentifierURL: `test://com.apple.xcode/${results.planName}/${target.name}/${t.identifier.replace(/\(\)$/, "")}`,
      });
    }
  }
  writeFileSync(join(output, "manifest.json"), appleJson(manifest));
  return 0;
}

/** Xcode before 16 had no such subcommand (its argument parser's wording; exit 64 as for any usage error). */
function unexpected(argument) {
  process.stderr.write(
    `Error: Unexpected argument '${argument}'\nUsage: xcresulttool get --path <path> [--id <id>] [--format <format>]\n`,
  );
  return 64;
}

/** `get [--legacy] --format json --path P [--id REF]`: the record, or the test summaries it references. */
function legacyGet(rest) {
  const path = option(rest, "--path");
  const format = option(rest, "--format") ?? "json";
  if (format !== "json") return unsupported("xcrun", `xcresulttool get --format ${format}`);
  const opened = open(path);
  if (!opened.results) return opened.code;
  const id = option(rest, "--id");
  let doc;
  if (id === undefined) doc = legacyRoot(path, opened.results);
  else if (id === refId(path, "tests")) doc = legacyTests(path, opened.results);
  else {
    process.stderr.write(`Error: no object with id ${id} in the result bundle\n`);
    return 1;
  }
  process.stdout.write(appleJson(doc));
  return 0;
}

export function xcresulttool(args) {
  const [command, ...rest] = args;
  const modern = xcodeVersion() >= 16;
  if (command === "version") {
    process.stdout.write(
      modern
        ? "xcresulttool version 23500, schema version: 0.1.0 (legacy commands format version: 3.53)\n"
        : "xcresulttool version 22608, format version 3.49 (current)\n",
    );
    return 0;
  }
  if (command === "get" && rest[0] === "test-results") {
    if (!modern) return unexpected("test-results");
    const which = rest[1];
    if (which !== "tests" && which !== "summary")
      return unsupported("xcrun", `xcresulttool get test-results ${which ?? ""}`);
    const opened = open(option(rest, "--path"));
    if (!opened.results) return opened.code;
    const doc = which === "tests" ? tests(opened.results) : summary(opened.results);
    process.stdout.write(rest.includes("--compact") ? `${JSON.stringify(doc)}\n` : appleJson(doc));
    return 0;
  }
  if (command === "get" && (rest[0] === undefined || rest[0].startsWith("-") || rest[0] === "object")) {
    const options = rest[0] === "object" ? rest.slice(1) : rest;
    if (modern && !options.includes("--legacy")) {
      process.stderr.write(LEGACY_REFUSAL);
      return 64;
    }
    if (!modern && options.includes("--legacy")) {
      process.stderr.write("Error: Unknown option '--legacy'\n");
      return 64;
    }
    return legacyGet(options);
  }
  if (command === "graph" || (command === "export" && rest.includes("--type"))) {
    if (modern && !rest.includes("--legacy")) {
      process.stderr.write(LEGACY_REFUSAL);
      return 64;
    }
    return unsupported("xcrun", `xcresulttool ${command} (legacy)`);
  }
  if (command === "export" && rest[0] === "attachments") {
    if (!modern) return unexpected("attachments");
    return exportAttachments(rest.slice(1));
  }
  return unsupported("xcrun", `xcresulttool ${args.join(" ")}`);
}
