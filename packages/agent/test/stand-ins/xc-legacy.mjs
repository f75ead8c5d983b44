// xcresulttool's legacy object graph (all Xcode versions before 16; Xcode 16+ behind --legacy): `get --format
// json --path P` prints the ActionsInvocationRecord, whose actionResult.testsRef names the test summaries that
// `get --format json --path P --id REF` prints (ActionTestPlanRunSummaries → testable summary per target →
// groups "All tests" → "T.xctest" → class → ActionTestMetadata). Every value is {"_type": {"_name"}, "_value"},
// every list {"_values"}; keys and their order as in ../fixtures/apple/xcresulttool-legacy-*.json. Failures
// are TestFailureIssueSummary entries of the record's issues (message, producingTarget, testCaseName
// "Class.method()"): their keys come from the format description (xcresulttool formatDescription), not from a
// recording.
import { uuidFrom } from "./xc-common.mjs";

const T = (name, extra = {}) => ({ _type: { _name: name, ...extra } });
const S = (v) => ({ ...T("String"), _value: String(v) });
const I = (v) => ({ ...T("Int"), _value: String(v) });
const D = (v) => ({ ...T("Double"), _value: String(v) });
const B = (v) => ({ ...T("Bool"), _value: String(v) });
const Dt = (seconds) => ({
  ...T("Date"),
  _value: new Date(seconds * 1000).toISOString().replace("Z", "+0000"),
});
const A = (...items) => ({ ...T("Array"), _values: items });
const typeDef = (name, supertype) => ({
  ...T("TypeDefinition"),
  name: S(name),
  ...(supertype ? { supertype } : {}),
});
const ref = (id, target) => ({
  ...T("Reference"),
  id: S(id),
  ...(target ? { targetType: typeDef(target) } : {}),
});
const abstract = { _name: "ActionAbstractTestSummary" };
const identifiable = { _name: "ActionTestSummaryIdentifiableObject", _supertype: abstract };

export function refId(bundle, what) {
  return `0~${Buffer.from(uuidFrom(`${bundle}#${what}`)).toString("base64url")}==`;
}

const STATUS = {
  Passed: "Success",
  Failed: "Failure",
  Skipped: "Skipped",
  "Expected Failure": "Expected Failure",
};

function failures(results) {
  return results.targets.flatMap((target) =>
    target.tests
      .filter((t) => t.result === "Failed")
      .flatMap((t) =>
        t.failureMessages.map((message) => ({
          ...T("TestFailureIssueSummary", { _supertype: { _name: "IssueSummary" } }),
          issueType: S("Uncategorized"),
          message: S(message.replace(/^[^:\s]+\.swift:\d+: /, "")),
          producingTarget: S(target.name),
          testCaseName: S(`${t.className}.${t.method}`),
        })),
      ),
  );
}

function issues(results) {
  const list = failures(results);
  return list.length > 0
    ? { ...T("ResultIssueSummaries"), testFailureSummaries: A(...list) }
    : T("ResultIssueSummaries");
}

export function legacyRoot(bundle, results) {
  const all = results.targets.flatMap((t) => t.tests);
  const failed = all.filter((t) => t.result === "Failed").length;
  const device = results.device;
  const counts = {
    ...T("ResultMetrics"),
    testsCount: I(all.length),
    ...(failed > 0 ? { testsFailedCount: I(failed) } : {}),
  };
  return {
    ...T("ActionsInvocationRecord"),
    actions: A({
      ...T("ActionRecord"),
      actionResult: {
        ...T("ActionResult"),
        coverage: T("CodeCoverageInfo"),
        issues: issues(results),
        logRef: ref(refId(bundle, "action-log"), "ActivityLogSection"),
        metrics: counts,
        resultName: S("action"),
        status: S(failed > 0 ? "failed" : "succeeded"),
        testsRef: ref(refId(bundle, "tests"), "ActionTestPlanRunSummaries"),
      },
      buildResult: {
        ...T("ActionResult"),
        coverage: T("CodeCoverageInfo"),
        issues: T("ResultIssueSummaries"),
        metrics: T("ResultMetrics"),
        resultName: S("build"),
        status: S("succeeded"),
      },
      endedTime: Dt(results.finishTime ?? Date.now() / 1000),
      runDestination: {
        ...T("ActionRunDestinationRecord"),
        displayName: S(device.deviceName),
        targetArchitecture: S(device.architecture),
        targetDeviceRecord: {
          ...T("ActionDeviceRecord"),
          identifier: S(device.deviceId),
          isConcreteDevice: B(true),
          modelName: S(device.modelName),
          name: S(device.deviceName),
          nativeArchitecture: S(device.architecture),
          operatingSystemVersion: S(device.osVersion),
          operatingSystemVersionWithBuildNumber: S(`${device.osVersion} (${device.osBuildNumber})`),
          platformRecord: {
            ...T("ActionPlatformRecord"),
            identifier: S(
              device.platform === "iOS"
                ? "com.apple.platform.iphoneos"
                : "com.apple.platform.iphonesimulator",
            ),
            userDescription: S(device.platform),
          },
        },
      },
      schemeCommandName: S("Test"),
      schemeTaskName: S("BuildAndAction"),
      startedTime: Dt(results.startTime),
      testPlanName: S(results.planName),
      title: S(`Testing project ${results.planName} with scheme ${results.planName}`),
    }),
    issues: issues(results),
    metrics: counts,
  };
}

function group(duration, identifier, url, subtests) {
  return {
    ...T("ActionTestSummaryGroup", { _supertype: identifiable }),
    duration: D(duration),
    identifier: S(identifier),
    identifierURL: S(url),
    name: S(identifier),
    subtests: A(...subtests),
  };
}

export function legacyTests(bundle, results) {
  const project = results.planName;
  const testables = results.targets.map((target) => {
    const base = `test://com.apple.xcode/${project}/${target.name}`;
    const byClass = new Map();
    for (const t of target.tests) byClass.set(t.className, [...(byClass.get(t.className) ?? []), t]);
    const sum = (tests) => tests.reduce((s, t) => s + t.durationSeconds, 0);
    const classes = [...byClass].map(([className, tests]) =>
      group(
        sum(tests),
        className,
        `${base}/${className}`,
        tests.map((t) => ({
          ...T("ActionTestMetadata", { _supertype: identifiable }),
          duration: D(t.durationSeconds),
          identifier: S(t.identifier),
          identifierURL: S(`${base}/${className}/${t.method.replace(/\(\)$/, "")}`),
          name: S(t.method),
          summaryRef: {
            ...T("Reference"),
            id: S(refId(bundle, `summary/${target.name}/${t.identifier}`)),
            targetType: typeDef(
              "ActionTestSummary",
              typeDef("ActionTestSummaryIdentifiableObject", typeDef("ActionAbstractTestSummary")),
            ),
          },
          testStatus: S(STATUS[t.result] ?? t.result),
        })),
      ),
    );
    return {
      ...T("ActionTestableSummary", { _supertype: abstract }),
      diagnosticsDirectoryName: S(
        `${target.name}-${uuidFrom(`${bundle}/${target.name}`)}-Configuration-Test Scheme Action-Iteration-1`,
      ),
      identifierURL: S(base),
      name: S(target.name),
      projectRelativePath: S(`${project}.xcodeproj`),
      targetName: S(target.name),
      testKind: S(target.kind === "UI test bundle" ? "UI" : "app hosted"),
      testLanguage: S(""),
      testRegion: S(""),
      tests: A(
        group(sum(target.tests), "All tests", `${base}/All%20tests`, [
          group(sum(target.tests), `${target.name}.xctest`, `${base}/${target.name}.xctest`, classes),
        ]),
      ),
    };
  });
  return {
    ...T("ActionTestPlanRunSummaries"),
    summaries: A({
      ...T("ActionTestPlanRunSummary", { _supertype: abstract }),
      name: S("Test Scheme Action"),
      testableSummaries: A(...testables),
    }),
  };
}
