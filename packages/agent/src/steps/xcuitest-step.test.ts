// The xcuitest step's logic against a small fake of Xcode's tools (one simulator, a suite whose tests pass or
// fail per run): what it runs in which order, what it reports, when it hands the run back. The stateful
// stand-ins of test/stand-ins and the end-to-end test (test/ios-*.int.test.ts) check it against the tools'
// real texts and JSON shapes; here the point is the step's rules.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ShardBatch, ShardTest, XcuitestStep } from "@testbay/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ToolResult, XcodeTools } from "../apple/xcrun.ts";
import { type PlistValue, parseXmlPlist, writeXmlPlist } from "../apple/xml-plist.ts";
import type { ShardContext, TestPackageInfo } from "./step-types.ts";
import { makeStepContext, type TestStepContext } from "./test-context.ts";
import { runXcuitestStep } from "./xcuitest-step.ts";

const UDID = "9EC90A99-6924-472D-8CDD-4D8234AB4779";

type Outcome = "pass" | "fail";
interface FakeTest {
  id: string;
  outcomes: Outcome[];
}

/** Xcode's tools as the step sees them: exit codes, output lines, and the files they write. */
class FakeXcode extends XcodeTools {
  calls: string[][] = [];
  state: "Booted" | "Shutdown" | "gone" = "Shutdown";
  installed: string[] = [];
  erased = 0;
  runs = new Map<string, number>();
  /** The simulator dies after this many tests of a run (the next test run only). */
  crashAfterTests: number | null = null;
  enumerates = true;
  private readonly results = new Map<string, Array<{ id: string; outcome: Outcome }>>();

  constructor(private readonly tests: FakeTest[]) {
    super({ workDir: tmpdir(), signal: new AbortController().signal });
  }

  override async run(
    command: "xcrun" | "xcodebuild",
    args: readonly string[],
    _timeoutMs: number,
    _how?: unknown,
    onLine?: (stream: "stdout" | "stderr", line: string) => void,
    signal?: AbortSignal,
  ): Promise<ToolResult> {
    this.calls.push([command, ...args]);
    const done = (exitCode: number, stdout: string[] = [], stderr: string[] = []): ToolResult => ({
      exitCode,
      signal: null,
      timedOut: false,
      aborted: false,
      spawnError: null,
      stdout,
      stderr,
      ok: exitCode === 0,
    });
    if (command === "xcodebuild") return done(...(await this.xcodebuild(args)));
    const [tool, sub, ...rest] = args;
    if (tool === "simctl" && sub === "list") {
      const devices =
        this.state === "gone"
          ? []
          : [
              {
                udid: UDID,
                name: "iPhone 15",
                state: this.state,
                isAvailable: true,
                deviceTypeIdentifier: "com.apple.CoreSimulator.SimDeviceType.iPhone-15",
              },
            ];
      return done(0, [
        JSON.stringify({ devices: { "com.apple.CoreSimulator.SimRuntime.iOS-17-5": devices } }),
      ]);
    }
    if (tool === "simctl" && this.state === "gone") return done(148, [], [`Invalid device: ${rest[0]}`]);
    if (tool === "simctl" && sub === "boot") {
      if (this.state === "Booted") return done(149, [], ["Unable to boot device in current state: Booted"]);
      this.state = "Booted";
      return done(0);
    }
    if (tool === "simctl" && sub === "bootstatus") return done(this.state === "Booted" ? 0 : 1);
    if (tool === "simctl" && sub === "erase") {
      if (this.state !== "Shutdown")
        return done(149, [], ["Unable to erase contents and settings in current state: Booted"]);
      this.erased++;
      this.installed = [];
      return done(0);
    }
    if (tool === "simctl" && sub === "install") {
      this.installed.push(rest[1] as string);
      return done(0);
    }
    if (tool === "simctl" && sub === "uninstall") return done(0);
    if (tool === "simctl" && sub === "spawn") {
      onLine?.("stdout", "2024-01-01 10:00:00.000 Df Shop[123:456] launched");
      await new Promise<void>((resolve) =>
        signal?.addEventListener("abort", () => resolve(), { once: true }),
      );
      return { ...done(0), aborted: true, ok: false, exitCode: null, signal: "SIGTERM" };
    }
    if (tool === "xcresulttool") return done(...(await this.xcresulttool(args)));
    return done(64, [], [`unexpected: ${args.join(" ")}`]);
  }

  private selected(args: readonly string[]): FakeTest[] {
    const only = args
      .filter((a) => a.startsWith("-only-testing:"))
      .map((a) => a.slice("-only-testing:".length));
    const skip = args
      .filter((a) => a.startsWith("-skip-testing:"))
      .map((a) => a.slice("-skip-testing:".length));
    const matches = (id: string, prefix: string) => id === prefix || id.startsWith(`${prefix}/`);
    return this.tests.filter(
      (t) => (only.length === 0 || only.some((p) => matches(t.id, p))) && !skip.some((p) => matches(t.id, p)),
    );
  }

  private async xcodebuild(args: readonly string[]): Promise<[number, string[], string[]]> {
    const value = (flag: string) => args[args.indexOf(flag) + 1] as string;
    if (this.state !== "Booted")
      return [70, [], ["Unable to find a destination matching the provided destination specifier"]];
    if (args.includes("-enumerate-tests")) {
      if (!this.enumerates) return [64, [], ["xcodebuild: error: invalid option '-enumerate-tests'"]];
      const enabledTests = this.selected(args).map((t) => ({ identifier: `${t.id}()` }));
      await writeFile(value("-test-enumeration-output-path"), JSON.stringify({ values: [{ enabledTests }] }));
      return [0, [], []];
    }
    const ran: Array<{ id: string; outcome: Outcome }> = [];
    for (const test of this.selected(args)) {
      if (this.crashAfterTests !== null && ran.length >= this.crashAfterTests) {
        this.crashAfterTests = null;
        this.state = "Shutdown";
        return [65, [], ["Lost connection to the test runner."]];
      }
      const n = this.runs.get(test.id) ?? 0;
      this.runs.set(test.id, n + 1);
      ran.push({ id: test.id, outcome: test.outcomes[Math.min(n, test.outcomes.length - 1)] as Outcome });
    }
    const bundle = value("-resultBundlePath");
    await mkdir(bundle, { recursive: true });
    this.results.set(bundle, ran);
    return ran.some((r) => r.outcome === "fail")
      ? [65, ["** TEST EXECUTE FAILED **"], []]
      : [0, ["** TEST EXECUTE SUCCEEDED **"], []];
  }

  private async xcresulttool(args: readonly string[]): Promise<[number, string[], string[]]> {
    const ran = this.results.get(args[args.indexOf("--path") + 1] as string);
    if (!ran) return [1, [], ["Error: not a result bundle"]];
    if (args[1] === "get") {
      const byTarget = new Map<string, Map<string, object[]>>();
      for (const { id, outcome } of ran) {
        const [target, cls, method] = id.split("/") as [string, string, string];
        const suites = byTarget.get(target) ?? new Map<string, object[]>();
        byTarget.set(target, suites);
        suites.set(cls, [
          ...(suites.get(cls) ?? []),
          {
            nodeType: "Test Case",
            nodeIdentifier: `${cls}/${method}()`,
            name: `${method}()`,
            result: outcome === "pass" ? "Passed" : "Failed",
            durationInSeconds: 1.5,
            ...(outcome === "fail"
              ? { children: [{ nodeType: "Failure Message", name: `${cls}.swift:42: XCTAssertTrue failed` }] }
              : {}),
          },
        ]);
      }
      const testNodes = [
        {
          nodeType: "Test Plan",
          name: "Shop",
          children: [...byTarget].map(([target, suites]) => ({
            nodeType: "UI test bundle",
            name: target,
            children: [...suites].map(([cls, children]) => ({ nodeType: "Test Suite", name: cls, children })),
          })),
        },
      ];
      return [0, [JSON.stringify({ testNodes })], []];
    }
    const dir = args[args.indexOf("--output-path") + 1] as string;
    await mkdir(dir, { recursive: true });
    const manifest = [];
    for (const [index, { id }] of ran.filter((r) => r.outcome === "fail").entries()) {
      const [, cls, method] = id.split("/") as [string, string, string];
      await writeFile(join(dir, `shot-${index}.png`), `png of ${id}`);
      manifest.push({
        testIdentifier: `${cls}/${method}()`,
        attachments: [
          {
            exportedFileName: `shot-${index}.png`,
            suggestedHumanReadableName: "Screenshot",
            isAssociatedWithFailure: true,
          },
        ],
      });
    }
    await writeFile(join(dir, "manifest.json"), JSON.stringify(manifest));
    return [0, [], []];
  }

  xcodebuildRuns(): string[][] {
    return this.calls.filter((c) => c[0] === "xcodebuild" && !c.includes("-enumerate-tests"));
  }
}

let files: string;
let ipa: string;
let testZip: string;
beforeAll(async () => {
  files = await mkdtemp(join(tmpdir(), "testbay-xcuitest-"));
  await mkdir(join(files, "app", "Payload", "Shop.app"), { recursive: true });
  await writeFile(join(files, "app", "Payload", "Shop.app", "Info.plist"), "<plist/>");
  ipa = join(files, "Shop.ipa");
  execFileSync("zip", ["-qr", ipa, "Payload"], { cwd: join(files, "app") });
  await mkdir(join(files, "tests", "Debug-iphonesimulator", "ShopUITests-Runner.app"), { recursive: true });
  await writeFile(
    join(files, "tests", "Shop_iphonesimulator17.5-arm64.xctestrun"),
    writeXmlPlist(
      new Map<string, PlistValue>([
        [
          "TestConfigurations",
          [
            new Map<string, PlistValue>([
              ["Name", "Test Scheme Action"],
              [
                "TestTargets",
                [
                  new Map<string, PlistValue>([
                    ["BlueprintName", "ShopUITests"],
                    ["IsUITestBundle", true],
                    ["TestBundlePath", "__TESTHOST__/PlugIns/ShopUITests.xctest"],
                    ["TestHostPath", "__TESTROOT__/Debug-iphonesimulator/ShopUITests-Runner.app"],
                    ["UITargetAppPath", "__TESTROOT__/Debug-iphonesimulator/Shop.app"],
                  ]),
                ],
              ],
            ]),
          ],
        ],
        ["__xctestrun_metadata__", new Map([["FormatVersion", { element: "integer", text: "2" }]])],
      ]),
    ),
  );
  testZip = join(files, "tests.zip");
  execFileSync("zip", ["-qr", testZip, "."], { cwd: join(files, "tests") });
});
afterAll(() => rm(files, { recursive: true, force: true }));

const contexts: TestStepContext[] = [];
afterEach(async () => {
  for (const ctx of contexts.splice(0)) await ctx.cleanup();
});

async function contextFor(shard?: ShardContext) {
  const ctx = await makeStepContext({
    device: { serial: UDID, platform: "ios", model: "iPhone 15", os_version: "17.5" },
    binary: {
      format: "ipa",
      platform: "ios",
      package_name: "com.example.shop",
      version_name: "1.0",
      version_code: "1",
      min_sdk: null,
      target_sdk: null,
      min_os_version: "16.0",
      abis: [],
      permissions: [],
      debuggable: false,
      display_name: "Shop",
    },
    appPath: async () => ipa,
    testPackage: {
      format: "xctest",
      sha256: "x",
      size_bytes: 1,
      test: {
        xctestrun: "Shop_iphonesimulator17.5-arm64.xctestrun",
        test_targets: [
          { name: "ShopUITests", bundle_id: "com.example.shopUITests", ui_target_app: "com.example.shop" },
        ],
      },
    } as TestPackageInfo,
    testPackagePath: async () => testZip,
    ...(shard ? { shard } : {}),
  });
  contexts.push(ctx);
  return ctx;
}

/** The test targets of a FormatVersion 2 .xctestrun's first configuration. */
function xctestrunTargets(plist: PlistValue): Array<Map<string, PlistValue>> {
  const configurations = plist instanceof Map ? plist.get("TestConfigurations") : undefined;
  const first = Array.isArray(configurations) ? configurations[0] : undefined;
  const targets = first instanceof Map ? first.get("TestTargets") : undefined;
  return Array.isArray(targets) ? targets.filter((t) => t instanceof Map) : [];
}

const step = (options: Partial<XcuitestStep> = {}): XcuitestStep => ({
  type: "xcuitest",
  record_video: "never",
  ...options,
});
const suite = (): FakeTest[] => [
  { id: "ShopUITests/LoginTests/testSignsIn", outcomes: ["pass"] },
  { id: "ShopUITests/LoginTests/testRejects", outcomes: ["fail"] },
  { id: "ShopUITests/CartTests/testAdds", outcomes: ["pass"] },
];

describe("the xcuitest step", () => {
  it("boots the simulator, installs the app before the run, and reports each test with a failure's screenshot", async () => {
    const xcode = new FakeXcode(suite());
    const ctx = await contextFor();
    const outcome = await runXcuitestStep(step(), ctx, { tools: xcode });
    expect(outcome).toEqual({ status: "failed", message: "1 of 3 test cases failed" });

    const order = xcode.calls.map((c) => c.slice(0, 3).join(" "));
    const install = order.indexOf("xcrun simctl install");
    expect(order.indexOf("xcrun simctl boot")).toBeLessThan(order.indexOf("xcrun simctl bootstatus"));
    expect(order.indexOf("xcrun simctl bootstatus")).toBeLessThan(install);
    expect(install).toBeLessThan(order.findIndex((c) => c.startsWith("xcodebuild")));
    expect(xcode.installed).toEqual([expect.stringMatching(/\/Payload\/Shop\.app$/)]);
    const [run] = xcode.xcodebuildRuns();
    expect(run).toEqual([
      "xcodebuild",
      "test-without-building",
      "-xctestrun",
      expect.stringMatching(/\/tests\/Shop_iphonesimulator17\.5-arm64\.xctestrun$/),
      "-destination",
      `id=${UDID}`,
      "-resultBundlePath",
      expect.stringMatching(/\.xcresult$/),
      "-parallel-testing-enabled",
      "NO",
    ]);
    // xcodebuild is told to install and test the app unpacked from the version's IPA (API.md §4b).
    const xctestrun = parseXmlPlist(await readFile(run?.[3] as string, "utf8"));
    const [target] = ("value" in xctestrun && xctestrunTargets(xctestrun.value)) || [];
    expect(target?.get("UITargetAppPath")).toBe(xcode.installed[0]);

    expect(ctx.cases.map((c) => `${c.classname}#${c.name} ${c.status}`)).toEqual([
      "ShopUITests.LoginTests#testSignsIn passed",
      "ShopUITests.LoginTests#testRejects failed",
      "ShopUITests.CartTests#testAdds passed",
    ]);
    const failed = ctx.cases[1];
    expect(failed).toMatchObject({
      message: "LoginTests.swift:42: XCTAssertTrue failed",
      duration_ms: 1500,
      artifacts: [
        `device-${UDID}/screenshots/ShopUITests.LoginTests.testRejects.png`,
        `device-${UDID}/device-log.txt`,
      ],
    });
    const shot = join(ctx.artifactsDir, `device-${UDID}/screenshots/ShopUITests.LoginTests.testRejects.png`);
    expect(await readFile(shot, "utf8")).toBe("png of ShopUITests/LoginTests/testRejects");
    expect(await readFile(join(ctx.artifactsDir, `device-${UDID}/device-log.txt`), "utf8")).toContain(
      "launched",
    );
  });

  it("passes the step's only and skip testing to the listing and the run", async () => {
    const xcode = new FakeXcode(suite());
    const ctx = await contextFor();
    const outcome = await runXcuitestStep(
      step({
        only_testing: ["ShopUITests/LoginTests"],
        skip_testing: ["ShopUITests/LoginTests/testRejects"],
      }),
      ctx,
      { tools: xcode },
    );
    expect(outcome.status).toBe("passed");
    expect(ctx.cases.map((c) => c.name)).toEqual(["testSignsIn"]);
    for (const call of xcode.calls.filter((c) => c[0] === "xcodebuild")) {
      expect(call).toContain("-only-testing:ShopUITests/LoginTests");
      expect(call).toContain("-skip-testing:ShopUITests/LoginTests/testRejects");
    }
  });

  it("clears the app's data: erases a shut down simulator before it boots, uninstalls on a booted one", async () => {
    const shutDown = new FakeXcode(suite());
    await runXcuitestStep(step({ clear_package_data: true }), await contextFor(), { tools: shutDown });
    expect(shutDown.erased).toBe(1);
    expect(shutDown.calls.some((c) => c[2] === "uninstall")).toBe(false);

    const booted = new FakeXcode(suite());
    booted.state = "Booted";
    await runXcuitestStep(step({ clear_package_data: true }), await contextFor(), { tools: booted });
    expect(booted.erased).toBe(0);
    const order = booted.calls.map((c) => c.slice(1, 3).join(" "));
    expect(order.indexOf("simctl uninstall")).toBeGreaterThan(-1);
    expect(order.indexOf("simctl uninstall")).toBeLessThan(order.indexOf("simctl install"));
    expect(booted.calls.find((c) => c[2] === "uninstall")).toEqual([
      "xcrun",
      "simctl",
      "uninstall",
      UDID,
      "com.example.shop",
    ]);
  });

  it("reruns a failed test alone with -only-testing: passing on a rerun makes it pass (flaky)", async () => {
    const xcode = new FakeXcode([
      { id: "ShopUITests/LoginTests/testSignsIn", outcomes: ["pass"] },
      { id: "ShopUITests/LoginTests/testFlaky", outcomes: ["fail", "fail", "pass"] },
    ]);
    const ctx = await contextFor();
    const outcome = await runXcuitestStep(step({ retry_failed_tests: 3 }), ctx, { tools: xcode });
    expect(outcome.status).toBe("passed");
    expect(ctx.cases.map((c) => `${c.name} ${c.status} ${c.retry}`)).toEqual([
      "testSignsIn passed 0",
      "testFlaky failed 0",
      "testFlaky failed 1",
      "testFlaky passed 2",
    ]);
    const reruns = xcode.xcodebuildRuns().slice(1);
    expect(reruns).toHaveLength(2);
    for (const rerun of reruns) {
      expect(rerun.filter((a) => a.startsWith("-only-testing:"))).toEqual([
        "-only-testing:ShopUITests/LoginTests/testFlaky",
      ]);
    }
    // Each try keeps its own screenshot.
    expect(ctx.cases[2]?.artifacts?.[0]).toBe(
      `device-${UDID}/screenshots/ShopUITests.LoginTests.testFlaky.retry-1.png`,
    );
  });

  it("hands the run back when the simulator shuts down during the run, reporting nothing of it", async () => {
    const xcode = new FakeXcode(suite());
    xcode.crashAfterTests = 1;
    const ctx = await contextFor();
    const outcome = await runXcuitestStep(step(), ctx, { tools: xcode });
    expect(outcome).toEqual({
      status: "errored",
      message: `device ${UDID} was lost: the simulator shut down or went away during the run: Lost connection to the test runner.`,
      deviceLost: true,
    });
    expect(ctx.cases).toEqual([]);
  });

  it("hands the run back when the simulator is gone before it starts", async () => {
    const xcode = new FakeXcode(suite());
    xcode.state = "gone";
    const outcome = await runXcuitestStep(step(), await contextFor(), { tools: xcode });
    expect(outcome).toMatchObject({ status: "errored", deviceLost: true });
    expect(xcode.calls.some((c) => c[0] === "xcodebuild")).toBe(false);
  });

  it("runs the shard's batches as exact -only-testing lists", async () => {
    const xcode = new FakeXcode(suite());
    const listed: ShardTest[][] = [];
    const queue: ShardBatch[] = [
      { id: "b1", tests: [{ classname: "ShopUITests.LoginTests", name: "testRejects" }] },
      {
        id: "b2",
        tests: [
          { classname: "ShopUITests.CartTests", name: "testAdds" },
          { classname: "ShopUITests.LoginTests", name: "testSignsIn" },
        ],
      },
    ] as ShardBatch[];
    const finished: string[] = [];
    const shard: ShardContext = {
      index: 0,
      count: 2,
      listTests: async (tests) => {
        listed.push(tests);
        return { planned: true, batches: 2, tests: tests.length, sharding: "duration" } as never;
      },
      nextBatch: async (done) => {
        if (done) finished.push(done);
        return queue.shift() ?? null;
      },
    };
    const ctx = await contextFor(shard);
    const outcome = await runXcuitestStep(step({ shards: 2 }), ctx, { tools: xcode });
    expect(outcome.status).toBe("failed");
    expect(listed[0]).toEqual([
      { classname: "ShopUITests.LoginTests", name: "testSignsIn" },
      { classname: "ShopUITests.LoginTests", name: "testRejects" },
      { classname: "ShopUITests.CartTests", name: "testAdds" },
    ]);
    expect(xcode.xcodebuildRuns().map((r) => r.filter((a) => a.startsWith("-only-testing:")))).toEqual([
      ["-only-testing:ShopUITests/LoginTests/testRejects"],
      ["-only-testing:ShopUITests/CartTests/testAdds", "-only-testing:ShopUITests/LoginTests/testSignsIn"],
    ]);
    expect(finished).toEqual(["b1", "b2"]);
    expect(ctx.cases.map((c) => `${c.name} ${c.status}`)).toEqual([
      "testRejects failed",
      // xcodebuild runs a batch in its own order, not the batch's.
      "testSignsIn passed",
      "testAdds passed",
    ]);
  });

  it("runs without a listing when xcodebuild cannot list tests (before Xcode 16), but not sharded", async () => {
    const xcode = new FakeXcode(suite());
    xcode.enumerates = false;
    const ctx = await contextFor();
    const outcome = await runXcuitestStep(step(), ctx, { tools: xcode });
    expect(outcome.status).toBe("failed");
    expect(ctx.cases).toHaveLength(3);
    expect(ctx.lines("agent").some((l) => l.includes("running without a listing"))).toBe(true);

    const sharded = new FakeXcode(suite());
    sharded.enumerates = false;
    const noShard: ShardContext = {
      index: 0,
      count: 2,
      listTests: async () => {
        throw new Error("not called");
      },
      nextBatch: async () => null,
    };
    const shardedOutcome = await runXcuitestStep(step({ shards: 2 }), await contextFor(noShard), {
      tools: sharded,
    });
    expect(shardedOutcome).toMatchObject({
      status: "errored",
      message: expect.stringContaining("-enumerate-tests"),
    });
  });

  it("refuses a device that is not iOS and a binary that is not an IPA or zipped app", async () => {
    const ctx = await contextFor();
    const android = {
      ...ctx,
      device: { serial: "emulator-5554", platform: "android" as const, model: "Pixel", os_version: "14" },
    };
    expect(await runXcuitestStep(step(), android, { tools: new FakeXcode([]) })).toEqual({
      status: "errored",
      message: "xcuitest needs an iOS simulator or device",
    });
    const apk = { ...ctx, binary: { ...ctx.binary, format: "apk" as const } };
    expect(await runXcuitestStep(step(), apk, { tools: new FakeXcode([]) })).toMatchObject({
      status: "errored",
    });
    expect(existsSync(join(ctx.workDir, "tests"))).toBe(false);
  });
});
