// The Apple stand-ins' own tests: bin/xcrun (simctl, devicectl, xcresulttool) and bin/xcodebuild, spawned as the
// agent spawns them. Their JSON is compared, key for key, with real output recorded by others
// (../fixtures/apple/, sources in SOURCES.md).
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import {
  type AppleLab,
  buildAppArchive,
  buildTestPackageZip,
  createAppleLab,
  runXc,
  startXc,
  type TestProductsSpec,
  writeAppBundle,
  writeTestProducts,
  type XcSuite,
} from "./apple-lab.ts";

const FIXTURES = fileURLToPath(new URL("../fixtures/apple/", import.meta.url));
const fixture = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name), "utf8"));
const UDID = "A201851A-8D41-48D2-86EE-319440740DAA";
const RUNTIME = "com.apple.CoreSimulator.SimRuntime.iOS-18-0";
const IPHONE = { udid: UDID, name: "iPhone 16 Pro", runtime: RUNTIME };
const APP = { bundleId: "com.example.shop", name: "Shop", version: "2.1" };

const SUITES: Record<string, XcSuite> = {
  ShopUITests: {
    tests: [
      {
        class: "LoginTests",
        method: "testSignsIn",
        outcome: "pass",
        duration_ms: 300,
        log: ["login form shown"],
      },
      {
        class: "LoginTests",
        method: "testRejectsBadPassword",
        outcome: "fail",
        duration_ms: 100,
        message: 'XCTAssertEqual failed: ("1") is not equal to ("2")',
      },
      { class: "CartTests", method: "testAddsItem", outcome: "pass", duration_ms: 100 },
      { class: "CartTests", method: "testOnTablet", outcome: "skip", message: "iPad only" },
    ],
  },
  ShopTests: { tests: [{ class: "PriceTests", method: "testRounds", outcome: "pass", duration_ms: 10 }] },
};

const PRODUCTS: TestProductsSpec = {
  app: APP,
  targets: [
    { name: "ShopUITests", ui: true },
    { name: "ShopTests", ui: false },
  ],
};

let lab: AppleLab;
const dirs: string[] = [];
afterEach(() => {
  lab?.cleanup();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), "testbay-apple-test-"));
  dirs.push(dir);
  return dir;
}

async function newLab(suites: Record<string, XcSuite> = SUITES, state: "Shutdown" | "Booted" = "Booted") {
  lab = await createAppleLab({ simulators: [{ ...IPHONE, state }], suites, timeScale: 0.01 });
  return lab;
}

const xcrun = (...args: string[]) => runXc(lab, "xcrun", args);
const xcodebuild = (...args: string[]) => runXc(lab, "xcodebuild", args);

/**
 * The key structure of a JSON value: objects by their keys (each key's own structure), arrays by the union of
 * their elements' structures. Two documents of the same kind compare equal whatever their values.
 */
type Shape = string | { [key: string]: Shape } | { "[]": Shape };
function shape(value: unknown): Shape {
  if (Array.isArray(value)) {
    return { "[]": value.reduce<Shape>((acc, v) => merge(acc, shape(v)), "empty") };
  }
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, shape((value as Record<string, unknown>)[k])]),
    );
  }
  return typeof value;
}
function merge(a: Shape, b: Shape): Shape {
  if (a === "empty") return b;
  if (b === "empty") return a;
  if (typeof a === "string" || typeof b === "string") return a === b ? a : `${a}|${b}`;
  if ("[]" in a && "[]" in b) return { "[]": merge(a["[]"] as Shape, b["[]"] as Shape) };
  const out: Record<string, Shape> = {};
  for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    const x = (a as Record<string, Shape>)[k];
    const y = (b as Record<string, Shape>)[k];
    out[k] = x === undefined ? (y as Shape) : y === undefined ? x : merge(x, y);
  }
  return out;
}

/** Whether every key path of `a` is one of `b` (values' types aside): `a` says nothing `b` would not. */
function isSubShape(a: Shape, b: Shape): boolean {
  if (typeof a === "string" || typeof b === "string") return typeof a === "string" && typeof b === "string";
  if ("[]" in a) return "[]" in b && (a["[]"] === "empty" || isSubShape(a["[]"] as Shape, b["[]"] as Shape));
  return Object.entries(a).every(
    ([k, v]) => k in b && isSubShape(v, (b as Record<string, Shape>)[k] as Shape),
  );
}

/** Each node of a test tree by its nodeType, with the keys it carries (union over the nodes of that type). */
function nodeKeys(nodes: Array<Record<string, unknown>>, out: Record<string, Set<string>> = {}) {
  for (const node of nodes) {
    const type = node.nodeType as string;
    out[type] ??= new Set();
    for (const key of Object.keys(node)) out[type].add(key);
    if (Array.isArray(node.children)) nodeKeys(node.children as Array<Record<string, unknown>>, out);
  }
  return out;
}
const sorted = (keys: Record<string, Set<string>>) =>
  Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, [...v].sort()]));

describe("simctl", () => {
  it("lists devices --json with the keys, layout and escaping of recorded simctl output", async () => {
    await newLab(SUITES, "Shutdown");
    expect((await xcrun("simctl", "boot", UDID)).code).toBe(0);
    const listed = await xcrun("simctl", "list", "devices", "--json");
    expect(listed.code).toBe(0);
    const real = fixture("simctl-list-devices-booted.json");
    const ours = JSON.parse(listed.stdout);
    expect(Object.keys(ours)).toEqual(["devices"]);
    expect(shape(ours.devices[RUNTIME])).toEqual(
      shape(real.devices["com.apple.CoreSimulator.SimRuntime.iOS-14-0"]),
    );
    // Every installed runtime is listed, an empty one as `[\n\n    ]` (the recorded layout).
    expect(ours.devices["com.apple.CoreSimulator.SimRuntime.iOS-17-4"]).toEqual([]);
    expect(listed.stdout).toContain('"com.apple.CoreSimulator.SimRuntime.iOS-17-4" : [\n\n    ]');
    expect(ours.devices[RUNTIME][0]).toMatchObject({
      udid: UDID,
      state: "Booted",
      name: "iPhone 16 Pro",
      isAvailable: true,
    });
    // simctl's own layout: " : " between key and value and escaped slashes.
    expect(listed.stdout).toContain(`"udid" : "${UDID}"`);
    expect(listed.stdout).toContain('"dataPath" : "\\/Users\\/');
    expect(
      JSON.parse((await xcrun("simctl", "list", "-j", "devices", "booted")).stdout).devices[RUNTIME],
    ).toHaveLength(1);
    await xcrun("simctl", "shutdown", UDID);
    expect(
      JSON.parse((await xcrun("simctl", "list", "devices", "booted", "-j")).stdout).devices[RUNTIME],
    ).toEqual([]);
  });

  it("fails every simctl command while CoreSimulatorService is down; devicectl still answers", async () => {
    await newLab();
    lab.breakCoreSimulator();
    const listed = await xcrun("simctl", "list", "devices", "--json");
    expect([listed.code, listed.stdout]).toEqual([1, ""]);
    expect(listed.stderr.split("\n")[0]).toBe(
      "CoreSimulatorService connection became invalid.  Simulator services will no longer be available.",
    );
    expect(listed.stderr.split("\n")[1]).toMatch(
      /^Unable to locate device set: Error Domain=NSPOSIXErrorDomain Code=61 "Connection refused"/,
    );
    expect((await xcrun("simctl", "shutdown", UDID)).code).toBe(1);
    const out = join(lab.stateDir, "devicectl-out.json");
    expect((await xcrun("devicectl", "list", "devices", "--json-output", out)).code).toBe(0);
    lab.mendCoreSimulator();
    expect((await xcrun("simctl", "list", "devices", "--json")).code).toBe(0);
  });

  it("is an xcrun without Xcode when no Apple lab is set, as /usr/bin/xcrun on a Mac with only the Command Line Tools", async () => {
    await newLab();
    const { FAKE_XCODE_STATE: _, ...env } = { ...process.env, ...lab.env };
    let failed: { status?: number; stderr?: string } = {};
    try {
      execFileSync("xcrun", ["simctl", "list", "devices", "--json"], { env, stdio: "pipe" });
    } catch (error) {
      failed = {
        status: (error as { status: number }).status,
        stderr: String((error as { stderr: Buffer }).stderr),
      };
    }
    expect(failed).toEqual({
      status: 72,
      stderr: 'xcrun: error: unable to find utility "simctl", not a developer tool or in PATH\n',
    });
  });

  it("boots, refuses a second boot with CoreSimulator's text and exit 149, and waits in bootstatus -b", async () => {
    await newLab(SUITES, "Shutdown");
    const status = await xcrun("simctl", "bootstatus", UDID, "-b");
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(
      new RegExp(`^Monitoring boot status for iPhone 16 Pro \\(${UDID}\\)\\.\\n`),
    );
    expect(status.stdout).toContain("\tFinished\n");
    expect(lab.simulators()[0]?.state).toBe("Booted");
    const again = await xcrun("simctl", "boot", UDID);
    expect(again.code).toBe(149);
    expect(again.stderr).toBe(
      "An error was encountered processing the command (domain=com.apple.CoreSimulator.SimError, code=405):\n" +
        "Unable to boot device in current state: Booted\n",
    );
    expect((await xcrun("simctl", "bootstatus", UDID, "-b")).stdout).toContain(
      "Device already booted, nothing to do.\n",
    );
    expect((await xcrun("simctl", "shutdown", UDID)).code).toBe(0);
    const twice = await xcrun("simctl", "shutdown", UDID);
    expect([twice.code, twice.stderr.split("\n")[1]]).toEqual([
      149,
      "Unable to shutdown device in current state: Shutdown",
    ]);
    const unknown = await xcrun("simctl", "boot", "00000000-0000-0000-0000-000000000000");
    expect([unknown.code, unknown.stderr]).toEqual([
      148,
      "Invalid device: 00000000-0000-0000-0000-000000000000\n",
    ]);
  });

  it("installs an .app read from its Info.plist and refuses what simctl refuses", async () => {
    await newLab(SUITES, "Shutdown");
    const dir = tempDir();
    const app = writeAppBundle(dir, APP);
    const off = await xcrun("simctl", "install", UDID, app);
    expect([off.code, off.stderr.split("\n")[1]]).toEqual([
      149,
      "Unable to lookup in current state: Shutdown",
    ]);
    await xcrun("simctl", "boot", UDID);
    const ipa = await xcrun("simctl", "install", UDID, buildAppArchive(dir, APP, "ipa"));
    expect(ipa.code).toBe(2);
    expect(ipa.stderr).toContain("An application bundle was not found at the provided path.");
    const broken = writeAppBundle(join(dir, "broken"), { ...APP, omitBundleId: true });
    const noId = await xcrun("simctl", "install", UDID, broken);
    expect(noId.code).toBe(22);
    expect(noId.stderr).toBe(
      "An error was encountered processing the command (domain=NSPOSIXErrorDomain, code=22):\n" +
        "Failed to install the requested application\n" +
        "The bundle identifier of the application could not be determined.\n" +
        "Ensure that the application's Info.plist contains a value for CFBundleIdentifier.\n",
    );
    expect(lab.installed(UDID)).toEqual({});
    expect((await xcrun("simctl", "launch", UDID, APP.bundleId)).code).not.toBe(0);
    expect((await xcrun("simctl", "install", UDID, app)).code).toBe(0);
    expect(lab.installed(UDID)[APP.bundleId]).toMatchObject({
      name: "Shop",
      version: "2.1",
      installs: 1,
      installedBy: "simctl",
    });
    expect((await xcrun("simctl", "launch", UDID, APP.bundleId)).stdout).toMatch(
      /^com\.example\.shop: \d+\n$/,
    );
    expect((await xcrun("simctl", "terminate", UDID, APP.bundleId)).code).toBe(0);
    const notRunning = await xcrun("simctl", "terminate", UDID, APP.bundleId);
    expect([notRunning.code, notRunning.stderr.split("\n")[1]]).toEqual([164, "found nothing to terminate"]);
    expect((await xcrun("simctl", "uninstall", UDID, APP.bundleId)).code).toBe(0);
    expect(lab.installed(UDID)).toEqual({});
  });

  it("erases only a shut-down simulator, which loses its apps", async () => {
    await newLab();
    lab.preinstall(UDID, { bundleId: APP.bundleId, name: APP.name });
    const booted = await xcrun("simctl", "erase", UDID);
    expect([booted.code, booted.stderr.split("\n")[1]]).toEqual([
      149,
      "Unable to erase contents and settings in current state: Booted",
    ]);
    expect(Object.keys(lab.installed(UDID))).toEqual([APP.bundleId]);
    await xcrun("simctl", "shutdown", UDID);
    expect((await xcrun("simctl", "erase", UDID)).code).toBe(0);
    expect(lab.installed(UDID)).toEqual({});
  });

  it("follows the device log from now on in the compact style, and ends when the simulator shuts down", async () => {
    await newLab();
    const dir = tempDir();
    const xctestrun = writeTestProducts(dir, PRODUCTS);
    const follower = startXc(lab, "xcrun", [
      "simctl",
      "spawn",
      UDID,
      "log",
      "stream",
      "--level",
      "debug",
      "--style",
      "compact",
    ]);
    await untilText(follower.stdout, "Timestamp               Ty Process[PID:TID]\n");
    expect(
      (
        await xcodebuild(
          ...runArgs(xctestrun, join(dir, "r.xcresult")),
          "-only-testing:ShopUITests/LoginTests/testSignsIn",
        )
      ).code,
    ).toBe(0);
    await untilText(follower.stdout, "login form shown");
    expect(follower.stdout()).toMatch(
      /\n\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} Df Shop\[\d+:[0-9a-f]+\] login form shown\n/,
    );
    await xcrun("simctl", "shutdown", UDID);
    expect((await follower.done).code).toBe(0);
  });

  it("records video until SIGINT and then finalises the file; takes screenshots as PNG", async () => {
    await newLab();
    const dir = tempDir();
    const file = join(dir, "run.mov");
    const recorder = startXc(lab, "xcrun", [
      "simctl",
      "io",
      UDID,
      "recordVideo",
      "--codec=h264",
      "--force",
      file,
    ]);
    await untilText(recorder.stdout, "Recording started\n");
    recorder.child.kill("SIGINT");
    const ended = await recorder.done;
    expect(ended.code).toBe(0);
    expect(ended.stdout).toContain(`Recording completed. Writing to disk.\n\nWrote video to: ${file}\n`);
    const mov = readFileSync(file);
    expect(mov.subarray(4, 12).toString("latin1")).toBe("ftypqt  ");
    expect(mov.includes(Buffer.from("moov"))).toBe(true);
    const shot = join(dir, "screen.png");
    expect((await xcrun("simctl", "io", UDID, "screenshot", shot)).code).toBe(0);
    expect(readFileSync(shot).subarray(0, 8)).toEqual(
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    );
  });

  it("leaves a recording without its moov when the simulator goes away mid-recording", async () => {
    await newLab();
    const file = join(tempDir(), "lost.mov");
    const recorder = startXc(lab, "xcrun", [
      "simctl",
      "io",
      UDID,
      "recordVideo",
      "--codec=h264",
      "--force",
      file,
    ]);
    await untilText(recorder.stdout, "Recording started\n");
    await xcrun("simctl", "shutdown", UDID);
    expect((await recorder.done).code).toBe(1);
    expect(readFileSync(file).includes(Buffer.from("moov"))).toBe(false);
  });
});

describe("simctl io recordVideo without --force", () => {
  it("refuses to overwrite a file", async () => {
    await newLab();
    const file = join(tempDir(), "taken.mov");
    writeFileSync(file, "old");
    const refused = await xcrun("simctl", "io", UDID, "recordVideo", "--codec=h264", file);
    expect(refused.code).toBe(1);
    expect(readFileSync(file, "utf8")).toBe("old");
  });
});

describe("devicectl", () => {
  const DEVICE = {
    identifier: "5B4C4E0B-0000-4000-8000-00000000A001",
    udid: "00008130-001234560E12001C",
    name: "QA iPhone",
  };

  it("writes list devices --json-output in the structure recorded from devicectl", async () => {
    lab = await createAppleLab({ devices: [DEVICE] });
    const out = join(tempDir(), "devices.json");
    expect((await xcrun("devicectl", "list", "devices", "--json-output", out)).code).toBe(0);
    const ours = JSON.parse(readFileSync(out, "utf8"));
    const real = fixture("devicectl-list-devices.json");
    expect(shape(ours)).toEqual(shape(real));
    expect(ours.result.devices[0]).toMatchObject({
      identifier: DEVICE.identifier,
      hardwareProperties: { udid: DEVICE.udid },
      deviceProperties: { name: "QA iPhone" },
    });
  });

  it("installs an .app on a device and fails as devicectl does on a bundle without an identifier", async () => {
    lab = await createAppleLab({ devices: [DEVICE] });
    const dir = tempDir();
    const ok = await xcrun(
      "devicectl",
      "device",
      "install",
      "app",
      "--device",
      DEVICE.identifier,
      writeAppBundle(dir, APP),
    );
    expect(ok.code).toBe(0);
    expect(lab.installed(DEVICE.identifier)[APP.bundleId]).toMatchObject({ installedBy: "devicectl" });
    const out = join(dir, "install.json");
    const broken = writeAppBundle(join(dir, "broken"), { ...APP, omitBundleId: true });
    const bad = await xcrun(
      "devicectl",
      "device",
      "install",
      "app",
      "--device",
      DEVICE.udid,
      "--json-output",
      out,
      broken,
    );
    expect(bad.code).toBe(1);
    expect(shape(JSON.parse(readFileSync(out, "utf8")))).toEqual(
      shape(fixture("devicectl-install-app-invalid-bundle.json")),
    );
    expect(JSON.parse(readFileSync(out, "utf8")).info.outcome).toBe("failed");
    expect(
      (await xcrun("devicectl", "device", "install", "app", "--device", "nope", writeAppBundle(dir, APP)))
        .code,
    ).toBe(1);
  });
});

function runArgs(xctestrun: string, bundle: string, udid = UDID) {
  return [
    "test-without-building",
    "-xctestrun",
    xctestrun,
    "-destination",
    `id=${udid}`,
    "-resultBundlePath",
    bundle,
  ];
}

async function untilText(read: () => string, text: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!read().includes(text)) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${JSON.stringify(text)} in ${JSON.stringify(read())}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("xcodebuild test-without-building and xcresulttool", () => {
  it("runs the suites, prints xcodebuild's lines, exits 65 on a failure and installs what it tests", async () => {
    await newLab(SUITES, "Shutdown");
    const dir = tempDir();
    const bundle = join(dir, "run.xcresult");
    const ran = await xcodebuild(...runArgs(writeTestProducts(dir, PRODUCTS), bundle));
    expect(ran.code).toBe(65);
    const lines = ran.stdout.split("\n");
    expect(lines).toContain("Test Case '-[ShopUITests.LoginTests testSignsIn]' started.");
    expect(
      lines.some((l) =>
        /^Test Case '-\[ShopUITests\.LoginTests testSignsIn\]' passed \(\d+\.\d{3} seconds\)\.$/.test(l),
      ),
    ).toBe(true);
    expect(lines).toContain(
      "/Users/testbay/src/ShopUITests/LoginTests.swift:42: error: -[ShopUITests.LoginTests testRejectsBadPassword] : " +
        'XCTAssertEqual failed: ("1") is not equal to ("2")',
    );
    expect(
      lines.some((l) => /^Test Case '-\[ShopUITests\.CartTests testOnTablet\]' skipped \(/.test(l)),
    ).toBe(true);
    expect(
      lines.some((l) =>
        /^\t Executed 2 tests, with 1 test skipped and 0 failures \(0 unexpected\) in /.test(l),
      ),
    ).toBe(true);
    expect(lines).toContain("\tLoginTests.testRejectsBadPassword()");
    expect(
      lines.some((l) => /^Test Suite 'All tests' failed at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\.$/.test(l)),
    ).toBe(true);
    expect(
      lines.filter((l) =>
        l.startsWith("\t Executed 5 tests, with 1 test skipped and 1 failure (0 unexpected) in "),
      ),
    ).toHaveLength(1);
    expect(lines.at(-3)).toBe("** TEST EXECUTE FAILED **");
    // xcodebuild booted the simulator and installed the runner and the app under test from the products.
    expect(lab.simulators()[0]?.state).toBe("Booted");
    expect(lab.installed(UDID)[APP.bundleId]).toMatchObject({ installedBy: "xcodebuild", version: "2.1" });
    expect(lab.installed(UDID)["com.example.shop.ShopUITests.xctrunner"]).toBeDefined();
  });

  it("answers get test-results tests/summary in the structure of recorded xcresulttool output", async () => {
    await newLab();
    const dir = tempDir();
    const bundle = join(dir, "run.xcresult");
    await xcodebuild(...runArgs(writeTestProducts(dir, PRODUCTS), bundle));
    const got = await xcrun("xcresulttool", "get", "test-results", "tests", "--path", bundle);
    expect(got.code).toBe(0);
    const ours = JSON.parse(got.stdout);
    const realFailures = fixture("xcresulttool-tests-unit-failures.json");
    const realUi = fixture("xcresulttool-tests-ui-and-unit.json");
    expect(shape(ours.devices)).toEqual(shape(realFailures.devices));
    expect(shape(ours.testPlanConfigurations)).toEqual(shape(realFailures.testPlanConfigurations));
    const real = nodeKeys([...realFailures.testNodes, ...realUi.testNodes]);
    const mine = nodeKeys(ours.testNodes);
    // Every node type we print is a real one, with no key the real one lacks; test cases carry them all.
    for (const [type, keys] of Object.entries(sorted(mine))) {
      expect(real[type], type).toBeDefined();
      expect(
        keys.filter((k) => !real[type]?.has(k)),
        type,
      ).toEqual([]);
    }
    expect(sorted(mine)["Test Case"]).toEqual(sorted(real)["Test Case"]);
    expect(Object.keys(mine).sort()).toEqual([
      "Failure Message",
      "Test Case",
      "Test Plan",
      "Test Suite",
      "UI test bundle",
      "Unit test bundle",
    ]);
    const cases = ours.testNodes[0].children[0].children.flatMap((s: { children: unknown[] }) => s.children);
    expect(
      cases.map((c: { nodeIdentifier: string; result: string }) => [c.nodeIdentifier, c.result]),
    ).toEqual([
      ["LoginTests/testSignsIn()", "Passed"],
      ["LoginTests/testRejectsBadPassword()", "Failed"],
      ["CartTests/testAddsItem()", "Passed"],
      ["CartTests/testOnTablet()", "Skipped"],
    ]);
    expect(cases[1].children).toEqual([
      {
        name: 'LoginTests.swift:42: XCTAssertEqual failed: ("1") is not equal to ("2")',
        nodeType: "Failure Message",
      },
    ]);
    expect(got.stdout).toContain('"nodeType" : "Test Case"');
    const summary = JSON.parse(
      (await xcrun("xcresulttool", "get", "test-results", "summary", "--path", bundle)).stdout,
    );
    expect(shape(summary)).toEqual(shape({ ...fixture("xcresulttool-summary-failed.json"), statistics: [] }));
    expect(summary).toMatchObject({
      result: "Failed",
      failedTests: 1,
      passedTests: 3,
      skippedTests: 1,
      totalTestCount: 5,
    });
  });

  it("keeps a failing UI test's screenshot, which export attachments writes with its manifest", async () => {
    await newLab();
    const dir = tempDir();
    const bundle = join(dir, "run.xcresult");
    await xcodebuild(...runArgs(writeTestProducts(dir, PRODUCTS), bundle));
    const out = join(dir, "attachments");
    const exported = await xcrun(
      "xcresulttool",
      "export",
      "attachments",
      "--path",
      bundle,
      "--output-path",
      out,
      "--only-failures",
    );
    expect(exported.code).toBe(0);
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
    expect(manifest).toHaveLength(1);
    expect(manifest[0].testIdentifier).toBe("LoginTests/testRejectsBadPassword()");
    const [shot] = manifest[0].attachments;
    expect(shot).toMatchObject({ isAssociatedWithFailure: true, deviceId: UDID });
    expect(shot.suggestedHumanReadableName).toMatch(
      /^Screenshot at failure_0_[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}\.png$/,
    );
    expect(readFileSync(join(out, shot.exportedFileName)).subarray(1, 4).toString("latin1")).toBe("PNG");
  });

  it("refuses the legacy object graph without --legacy, with Xcode 16's text", async () => {
    await newLab();
    const dir = tempDir();
    const bundle = join(dir, "run.xcresult");
    await xcodebuild(...runArgs(writeTestProducts(dir, PRODUCTS), bundle), "-only-testing:ShopTests");
    const legacy = await xcrun("xcresulttool", "get", "--format", "json", "--path", bundle);
    expect(legacy.code).toBe(64);
    expect(legacy.stderr).toBe(readFileSync(join(FIXTURES, "xcresulttool-get-without-legacy.txt"), "utf8"));
    expect(
      (await xcrun("xcresulttool", "get", "test-results", "tests", "--path", join(dir, "none.xcresult")))
        .code,
    ).toBe(1);
  });

  it("prints the legacy object graph with --legacy, in the structure of the recorded one", async () => {
    await newLab();
    const dir = tempDir();
    const bundle = join(dir, "run.xcresult");
    await xcodebuild(
      ...runArgs(writeTestProducts(dir, PRODUCTS), bundle),
      "-only-testing:ShopTests/PriceTests/testRounds",
    );
    const root = await xcrun("xcresulttool", "get", "--legacy", "--format", "json", "--path", bundle);
    expect(root.code).toBe(0);
    const record = JSON.parse(root.stdout);
    expect(isSubShape(shape(record), shape(fixture("xcresulttool-legacy-root.json")))).toBe(true);
    const testsRef = record.actions._values[0].actionResult.testsRef.id._value;
    const summaries = await xcrun(
      "xcresulttool",
      "get",
      "--legacy",
      "--format",
      "json",
      "--path",
      bundle,
      "--id",
      testsRef,
    );
    expect(summaries.code).toBe(0);
    expect(shape(JSON.parse(summaries.stdout))).toEqual(shape(fixture("xcresulttool-legacy-tests-ref.json")));
    expect(summaries.stdout).toContain('"_value" : "PriceTests/testRounds()"');
  });

  it("models an Xcode 15 lab: only the legacy graph, with its failures; no test-results, attachments or listing", async () => {
    lab = await createAppleLab({
      simulators: [{ ...IPHONE, state: "Booted" }],
      suites: SUITES,
      timeScale: 0.01,
      xcodeVersion: 15,
    });
    const dir = tempDir();
    const xctestrun = writeTestProducts(dir, PRODUCTS);
    const bundle = join(dir, "run.xcresult");
    expect(
      (await xcodebuild(...runArgs(xctestrun, bundle), "-only-testing:ShopUITests/LoginTests")).code,
    ).toBe(65);
    expect((await xcrun("xcresulttool", "get", "test-results", "tests", "--path", bundle)).code).toBe(64);
    expect((await xcrun("xcresulttool", "get", "--legacy", "--format", "json", "--path", bundle)).code).toBe(
      64,
    );
    expect(
      (
        await xcrun(
          "xcresulttool",
          "export",
          "attachments",
          "--path",
          bundle,
          "--output-path",
          join(dir, "a"),
        )
      ).code,
    ).toBe(64);
    const listing = await xcodebuild(
      "test-without-building",
      "-enumerate-tests",
      "-xctestrun",
      xctestrun,
      "-destination",
      `id=${UDID}`,
    );
    expect([listing.code, listing.stderr]).toEqual([
      64,
      "xcodebuild: error: invalid option '-enumerate-tests'\n",
    ]);
    const record = JSON.parse(
      (await xcrun("xcresulttool", "get", "--format", "json", "--path", bundle)).stdout,
    );
    const failures = record.issues.testFailureSummaries._values;
    expect(
      failures.map((f: Record<string, { _value: string }>) => [
        f.producingTarget?._value,
        f.testCaseName?._value,
        f.message?._value,
      ]),
    ).toEqual([
      [
        "ShopUITests",
        "LoginTests.testRejectsBadPassword()",
        'XCTAssertEqual failed: ("1") is not equal to ("2")',
      ],
    ]);
    const testsRef = record.actions._values[0].actionResult.testsRef.id._value;
    const summaries = JSON.parse(
      (await xcrun("xcresulttool", "get", "--format", "json", "--path", bundle, "--id", testsRef)).stdout,
    );
    const classes =
      summaries.summaries._values[0].testableSummaries._values[0].tests._values[0].subtests._values[0]
        .subtests._values;
    expect(
      classes[0].subtests._values.map((t: Record<string, { _value: string }>) => [
        t.identifier?._value,
        t.testStatus?._value,
      ]),
    ).toEqual([
      ["LoginTests/testSignsIn()", "Success"],
      ["LoginTests/testRejectsBadPassword()", "Failure"],
    ]);
  });

  it("selects with -only-testing and -skip-testing, and lists without running with -enumerate-tests", async () => {
    await newLab();
    const dir = tempDir();
    const xctestrun = writeTestProducts(dir, PRODUCTS);
    const bundle = join(dir, "only.xcresult");
    const only = await xcodebuild(
      ...runArgs(xctestrun, bundle),
      "-only-testing:ShopUITests/LoginTests",
      "-skip-testing:ShopUITests/LoginTests/testRejectsBadPassword",
      "-only-testing:ShopTests/PriceTests/testRounds()",
    );
    expect(only.code).toBe(0);
    expect(only.stdout.split("\n").at(-3)).toBe("** TEST EXECUTE SUCCEEDED **");
    const tests = JSON.parse(
      (await xcrun("xcresulttool", "get", "test-results", "tests", "--path", bundle)).stdout,
    );
    const ids = tests.testNodes[0].children.flatMap(
      (b: { name: string; children: Array<{ children: Array<{ nodeIdentifier: string }> }> }) =>
        b.children.flatMap((s) => s.children.map((c) => `${b.name}/${c.nodeIdentifier}`)),
    );
    expect(ids).toEqual(["ShopUITests/LoginTests/testSignsIn()", "ShopTests/PriceTests/testRounds()"]);

    const listing = join(dir, "tests.json");
    const before = lab.calls().length;
    const listed = await xcodebuild(
      "test-without-building",
      "-enumerate-tests",
      "-test-enumeration-format",
      "json",
      "-test-enumeration-style",
      "flat",
      "-test-enumeration-output-path",
      listing,
      "-xctestrun",
      xctestrun,
      "-destination",
      `id=${UDID}`,
      "-skip-testing:ShopUITests/CartTests",
    );
    expect(listed.code).toBe(0);
    const doc = JSON.parse(readFileSync(listing, "utf8"));
    // The recorded listing's keys are all there (Xcode also writes errors and disabledTests).
    expect(shape(doc)).toMatchObject(shape(fixture("xcodebuild-enumerate-tests-flat.json")) as object);
    expect(doc.values[0].enabledTests.map((t: { identifier: string }) => t.identifier)).toEqual([
      "ShopUITests/LoginTests/testSignsIn",
      "ShopUITests/LoginTests/testRejectsBadPassword",
      "ShopTests/PriceTests/testRounds",
    ]);
    expect(lab.calls().length).toBe(before + 1);
    expect(lab.testRuns(UDID)).toEqual({});
  });

  it("reads FormatVersion 1 xctestruns, honouring their SkipTestIdentifiers (a recorded file)", async () => {
    await newLab({
      "sample-appUITests": {
        tests: [
          { class: "MoreTests", method: "testDismissModal" },
          { class: "MoreTests", method: "testOpensModal" },
          { class: "CrashingTests", method: "testCrashes" },
          { class: "StoryboardTests", method: "testEnabledButton" },
        ],
      },
    });
    const dir = tempDir();
    const xctestrun = join(dir, "UITesting_iphonesimulator12.1-x86_64.xctestrun");
    copyFileSync(join(FIXTURES, "xctestrun-v1-two-ui-targets.xctestrun"), xctestrun);
    const listing = join(dir, "tests.json");
    const listed = await xcodebuild(
      "test-without-building",
      "-enumerate-tests",
      "-test-enumeration-format",
      "json",
      "-test-enumeration-output-path",
      listing,
      "-xctestrun",
      xctestrun,
      "-destination",
      `platform=iOS Simulator,id=${UDID}`,
    );
    expect(listed.code).toBe(0);
    expect(JSON.parse(readFileSync(listing, "utf8")).values[0].enabledTests).toEqual([
      { identifier: "sample-appUITests/MoreTests/testOpensModal" },
      { identifier: "sample-appUITests/StoryboardTests/testEnabledButton" },
    ]);
  });

  it("refuses an existing result bundle and an unknown destination as xcodebuild does", async () => {
    await newLab();
    const dir = tempDir();
    const xctestrun = writeTestProducts(dir, PRODUCTS);
    const bundle = join(dir, "taken.xcresult");
    writeFileSync(bundle, "");
    const taken = await xcodebuild(...runArgs(xctestrun, bundle));
    expect([taken.code, taken.stderr]).toEqual([
      64,
      `xcodebuild: error: Existing file at -resultBundlePath "${bundle}"\n`,
    ]);
    const nowhere = await xcodebuild(...runArgs(xctestrun, join(dir, "x.xcresult"), "0000-NOPE"));
    expect(nowhere.code).toBe(70);
    expect(nowhere.stderr).toContain(
      "Unable to find a destination matching the provided destination specifier:\n\t\t{ id:0000-NOPE }",
    );
    expect(existsSync(join(dir, "x.xcresult"))).toBe(false);
  });

  it("needs the app under test installed when the xctestrun names it only by bundle identifier", async () => {
    await newLab({ ShopUITests: { tests: [{ class: "LoginTests", method: "testSignsIn" }] } });
    const dir = tempDir();
    const xctestrun = writeTestProducts(dir, {
      app: APP,
      omitApp: true,
      targets: [
        { name: "ShopUITests", ui: true, uiTargetAppPath: false, uiTargetAppBundleIdentifier: APP.bundleId },
      ],
    });
    const missing = await xcodebuild(...runArgs(xctestrun, join(dir, "a.xcresult")));
    expect(missing.code).toBe(65);
    expect(missing.stdout).toContain(
      `: error: -[ShopUITests.LoginTests testSignsIn] : Failed to launch app with identifier: ${APP.bundleId}`,
    );
    expect((await xcrun("simctl", "install", UDID, writeAppBundle(join(dir, "app"), APP))).code).toBe(0);
    const installed = await xcodebuild(...runArgs(xctestrun, join(dir, "b.xcresult")));
    expect(installed.code).toBe(0);
    expect(lab.installed(UDID)[APP.bundleId]?.installedBy).toBe("simctl");
  });

  it("runs shards at once on two simulators, each booted by its own xcodebuild", async () => {
    const second = { udid: "B7A5E0C2-1111-4222-8333-944455556666", name: "iPhone 15", runtime: RUNTIME };
    lab = await createAppleLab({ simulators: [IPHONE, second], suites: SUITES, timeScale: 0.01 });
    const dir = tempDir();
    const xctestrun = writeTestProducts(dir, PRODUCTS);
    const [a, b] = await Promise.all([
      xcodebuild(
        ...runArgs(xctestrun, join(dir, "a.xcresult"), UDID),
        "-only-testing:ShopUITests/LoginTests/testSignsIn",
      ),
      xcodebuild(
        ...runArgs(xctestrun, join(dir, "b.xcresult"), second.udid),
        "-only-testing:ShopUITests/CartTests/testAddsItem",
      ),
    ]);
    expect([a.code, b.code]).toEqual([0, 0]);
    expect(lab.simulators().map((s) => s.state)).toEqual(["Booted", "Booted"]);
    expect(Object.keys(lab.installed(second.udid))).toContain(APP.bundleId);
  });

  it("loses a physical device unplugged mid-run as the run's crash", async () => {
    const device = {
      identifier: "5B4C4E0B-0000-4000-8000-00000000A001",
      udid: "00008130-001234560E12001C",
      name: "QA iPhone",
    };
    lab = await createAppleLab({
      devices: [device],
      suites: {
        ShopUITests: { tests: [{ class: "LoginTests", method: "testHangs", duration_ms: 600_000 }] },
      },
      timeScale: 0.01,
    });
    const dir = tempDir();
    const bundle = join(dir, "lost.xcresult");
    const running = startXc(
      lab,
      "xcodebuild",
      runArgs(writeTestProducts(dir, PRODUCTS), bundle, device.udid),
    );
    await untilText(running.stdout, "Test Case '-[ShopUITests.LoginTests testHangs]' started.");
    lab.disconnect(device.identifier);
    const ended = await running.done;
    expect(ended.code).toBe(65);
    expect(ended.stdout).toContain("Lost connection to the test runner.");
    const out = join(dir, "devices.json");
    await xcrun("devicectl", "list", "devices", "--json-output", out);
    expect(JSON.parse(readFileSync(out, "utf8")).result.devices[0].connectionProperties.tunnelState).toBe(
      "unavailable",
    );
  });

  it("fails a UI target whose app is missing from the products, and installs the app UITargetAppPath points at", async () => {
    await newLab({ ShopUITests: { tests: [{ class: "LoginTests", method: "testSignsIn" }] } });
    const dir = tempDir();
    const xctestrun = writeTestProducts(dir, {
      app: APP,
      omitApp: true,
      targets: [{ name: "ShopUITests", ui: true }],
    });
    const missing = await xcodebuild(...runArgs(xctestrun, join(dir, "a.xcresult")));
    expect(missing.code).toBe(65);
    expect(missing.stdout).toContain(
      "ShopUITests-Runner encountered an error (Failed to install the app under test.",
    );
    expect(missing.stdout).not.toContain("Test Case");
    const uploaded = writeAppBundle(join(dir, "uploaded"), { ...APP, version: "3.0" });
    writeFileSync(
      xctestrun,
      readFileSync(xctestrun, "utf8").replace(
        /__TESTROOT__\/Debug-iphonesimulator\/Shop\.app(?=<)/g,
        uploaded,
      ),
    );
    expect((await xcodebuild(...runArgs(xctestrun, join(dir, "b.xcresult")))).code).toBe(0);
    expect(lab.installed(UDID)[APP.bundleId]).toMatchObject({ version: "3.0", installedBy: "xcodebuild" });
  });

  it("installs the products' app over what was installed, and records what each target's tests ran against", async () => {
    await newLab({
      ShopUITests: { tests: [{ class: "LoginTests", method: "testSignsIn" }] },
      ShopTests: { tests: [{ class: "ModelTests", method: "testTotals" }] },
    });
    lab.preinstall(UDID, { bundleId: APP.bundleId, name: "Shop", version: "1.0", build: "240" });
    const dir = tempDir();
    const xctestrun = writeTestProducts(dir, {
      app: { ...APP, build: "239" },
      targets: [
        { name: "ShopUITests", ui: true },
        { name: "ShopTests", ui: false },
      ],
    });
    expect((await xcodebuild(...runArgs(xctestrun, join(dir, "a.xcresult")))).code).toBe(0);
    // xcodebuild installed the app at UITargetAppPath (and the app hosting the unit tests): build 239.
    expect(lab.installed(UDID)[APP.bundleId]).toMatchObject({ build: "239", installedBy: "xcodebuild" });
    const [session] = lab.testSessions(UDID);
    expect(session?.xctestrun).toBe(xctestrun);
    expect(session?.targets.map((t) => `${t.name} ${t.app?.bundleId} ${t.app?.build}`)).toEqual([
      `ShopUITests ${APP.bundleId} 239`,
      `ShopTests ${APP.bundleId} 239`,
    ]);
  });

  it("fails a target whose test bundle is not at TestBundlePath (a host without the tests in its PlugIns)", async () => {
    await newLab({ ShopTests: { tests: [{ class: "ModelTests", method: "testTotals" }] } });
    const dir = tempDir();
    const xctestrun = writeTestProducts(dir, { app: APP, targets: [{ name: "ShopTests", ui: false }] });
    rmSync(join(dir, "Debug-iphonesimulator", "Shop.app", "PlugIns"), { recursive: true });
    const ran = await xcodebuild(...runArgs(xctestrun, join(dir, "a.xcresult")));
    expect(ran.code).toBe(65);
    expect(ran.stdout).toContain(
      "Shop encountered an error (Failed to load the test bundle. (Underlying Error: The bundle “ShopTests” couldn’t be loaded because its executable couldn’t be located.",
    );
    expect(ran.stdout).not.toContain("Test Case");
    expect(lab.testSessions(UDID)).toEqual([expect.objectContaining({ targets: [] })]);
  });

  it("counts the runs of a flaky test on each device: it fails, then passes when run again", async () => {
    await newLab({
      ShopUITests: { tests: [{ class: "LoginTests", method: "testSignsIn", outcomes: ["fail", "pass"] }] },
    });
    const dir = tempDir();
    const xctestrun = writeTestProducts(dir, PRODUCTS);
    const only = "-only-testing:ShopUITests/LoginTests/testSignsIn";
    expect((await xcodebuild(...runArgs(xctestrun, join(dir, "1.xcresult")), only)).code).toBe(65);
    expect((await xcodebuild(...runArgs(xctestrun, join(dir, "2.xcresult")), only)).code).toBe(0);
    expect(lab.testRuns(UDID)).toEqual({ "ShopUITests/LoginTests/testSignsIn": 2 });
  });

  it("loses the simulator in a crash: the test fails with the crash text, the rest never runs, the device is Shutdown", async () => {
    await newLab({
      ShopUITests: {
        tests: [
          { class: "LoginTests", method: "testSignsIn", duration_ms: 100 },
          { class: "LoginTests", method: "testHangs", duration_ms: 600_000 },
          { class: "LoginTests", method: "testNeverRuns" },
        ],
      },
    });
    const dir = tempDir();
    const bundle = join(dir, "crash.xcresult");
    const running = startXc(lab, "xcodebuild", runArgs(writeTestProducts(dir, PRODUCTS), bundle));
    await untilText(running.stdout, "Test Case '-[ShopUITests.LoginTests testHangs]' started.");
    lab.crash(UDID);
    const ended = await running.done;
    expect(ended.code).toBe(65);
    expect(ended.stdout).toContain(
      "\tLoginTests.testHangs() encountered an error (Test crashed with signal kill.)\n",
    );
    expect(ended.stdout).toContain(
      "encountered an error (Lost connection to the test runner. If you believe this error represents a bug",
    );
    expect(ended.stdout).not.toContain("testNeverRuns");
    expect(lab.simulators()[0]).toMatchObject({ state: "Shutdown", crashes: 1 });
    const tests = JSON.parse(
      (await xcrun("xcresulttool", "get", "test-results", "tests", "--path", bundle)).stdout,
    );
    const cases = tests.testNodes[0].children[0].children[0].children;
    expect(cases.map((c: { name: string; result: string }) => [c.name, c.result])).toEqual([
      ["testSignsIn()", "Passed"],
      ["testHangs()", "Failed"],
    ]);
    expect(cases[1].children[0].name).toBe("Test crashed with signal kill.");
  });
  it("runs a build-for-testing zip once unzipped, and installs an app from an unzipped IPA", async () => {
    await newLab();
    const dir = tempDir();
    const zip = buildTestPackageZip(join(dir, "uploads"), { ...PRODUCTS, formatVersion: 1 });
    execFileSync("unzip", ["-q", zip, "-d", join(dir, "tests")]);
    const xctestrun = join(dir, "tests", "Shop_iphonesimulator18.0-arm64.xctestrun");
    const ran = await xcodebuild(...runArgs(xctestrun, join(dir, "run.xcresult")), "-only-testing:ShopTests");
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain("Test Case '-[ShopTests.PriceTests testRounds]' passed");
    execFileSync("unzip", ["-q", buildAppArchive(join(dir, "uploads"), APP, "ipa"), "-d", join(dir, "app")]);
    lab.cleanup();
    await newLab();
    expect((await xcrun("simctl", "install", UDID, join(dir, "app", "Payload", "Shop.app"))).code).toBe(0);
    expect(lab.installed(UDID)[APP.bundleId]?.version).toBe("2.1");
  });

  it("runs on a physical device named by its UDID, and refuses one that is not connected", async () => {
    const device = {
      identifier: "5B4C4E0B-0000-4000-8000-00000000A001",
      udid: "00008130-001234560E12001C",
      name: "QA iPhone",
    };
    lab = await createAppleLab({
      devices: [device, { ...device, identifier: "OFF", udid: "00008130-OFF", connected: false }],
      suites: SUITES,
      timeScale: 0.01,
    });
    const dir = tempDir();
    const xctestrun = writeTestProducts(dir, PRODUCTS);
    const bundle = join(dir, "device.xcresult");
    expect(
      (await xcodebuild(...runArgs(xctestrun, bundle, device.udid), "-only-testing:ShopTests")).code,
    ).toBe(0);
    expect(lab.installed(device.identifier)[APP.bundleId]?.installedBy).toBe("xcodebuild");
    const tests = JSON.parse(
      (await xcrun("xcresulttool", "get", "test-results", "tests", "--path", bundle)).stdout,
    );
    expect(tests.devices[0]).toMatchObject({
      deviceId: device.udid,
      deviceName: "QA iPhone",
      platform: "iOS",
    });
    expect((await xcodebuild(...runArgs(xctestrun, join(dir, "off.xcresult"), "00008130-OFF"))).code).toBe(
      70,
    );
  });
});
