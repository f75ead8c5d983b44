// API.md §14's instrumentation options on the stateful adb stand-in: orchestrator, environment, additional APKs,
// push, pull (with pull_filter, a missing path), coverage, always_run, retries under the orchestrator, a
// device entry's locale and orientation.
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { InstrumentationStep } from "@testbay/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createDeviceLab, type DeviceLab, type SuiteTest } from "../../test/stand-ins/device-lab.ts";
import type { FullInstrumentationStep } from "./instrumentation-options.ts";
import { runInstrumentationStep } from "./instrumentation-step.ts";
import type { StepContext } from "./step-types.ts";
import { ANDROID_BINARY, makeStepContext, type TestStepContext } from "./test-context.ts";

const binaries = fileURLToPath(new URL("../../../server/test/fixtures/binaries/", import.meta.url));
const TOOLS = fileURLToPath(new URL("../../test/fixtures/tool-apks/", import.meta.url));
const APP = join(binaries, "app-basic.apk");
const TEST_APK = join(binaries, "app-basic-androidTest.apk");
const SERIAL = "emulator-5554";
const TEST_PACKAGE = "com.example.basic.test";
const RUNNER = "androidx.test.runner.AndroidJUnitRunner";
const login = "com.example.basic.LoginTest";
const cart = "com.example.basic.CartTest";
const setupClass = "com.example.basic.SetupTest";

const tests: SuiteTest[] = [
  { class: setupClass, method: "seeds", outcome: "pass", duration_ms: 100 },
  {
    class: login,
    method: "signsIn",
    outcome: "pass",
    duration_ms: 100,
    writes: {
      "/sdcard/Pictures/screenshots/signsIn.png": "png-1",
      "/sdcard/allure-results/a-result.json": "{}",
    },
  },
  { class: login, method: "flaky", outcomes: ["fail", "pass"], duration_ms: 100 },
  { class: cart, method: "addsItem", outcome: "crash", duration_ms: 100 },
  {
    class: cart,
    method: "checksOut",
    outcome: "pass",
    duration_ms: 100,
    writes: { "/sdcard/Pictures/screenshots/checksOut.png": "png-2" },
  },
];

let lab: DeviceLab | undefined;
let ctx: TestStepContext | undefined;

afterEach(async () => {
  vi.unstubAllEnvs();
  await ctx?.cleanup();
  lab?.cleanup();
  ctx = undefined;
  lab = undefined;
});

async function setUp(options: { serial?: string; extra?: Partial<StepContext> } = {}) {
  const serial = options.serial ?? SERIAL;
  lab = await createDeviceLab({
    devices: [{ serial, model: "Pixel 7", sdk: 34, ...(serial === SERIAL ? {} : { usb: "1-1" }) }],
    suites: { [TEST_PACKAGE]: { tests } },
    timeScale: 0.02,
  });
  for (const [name, value] of Object.entries(lab.env)) vi.stubEnv(name, value);
  const files = mkdtempSync(join(tmpdir(), "version-files-"));
  writeFileSync(join(files, "users.json"), '{"users":["ann"]}');
  const versionFiles: Record<string, string> = {
    "helper.apk": join(TOOLS, "helper.apk"),
    "users.json": join(files, "users.json"),
  };
  ctx = await makeStepContext({
    device: { serial, platform: "android", model: "Pixel 7", os_version: "14", emulator: serial === SERIAL },
    appPath: async () => APP,
    binary: { ...ANDROID_BINARY, package_name: "com.example.basic" },
    packageName: "com.example.basic",
    testPackage: {
      format: "apk",
      sha256: "0".repeat(64),
      size_bytes: statSync(TEST_APK).size,
      test: { package_name: TEST_PACKAGE, runner: RUNNER, target_package: "com.example.basic" },
    },
    testPackagePath: async () => TEST_APK,
    versionFilePath: async (name) => {
      const path = versionFiles[name];
      if (!path) throw new Error(`the version has no file named ${name}`);
      return path;
    },
    androidTools: TOOLS,
    ...options.extra,
  });
  return { lab, ctx };
}

const step = (extra: Partial<FullInstrumentationStep>): InstrumentationStep =>
  ({
    type: "instrumentation",
    record_video: "never",
    logcat: false,
    screenshot_on_failure: false,
    ...extra,
  }) as InstrumentationStep;

const adbCommands = (l: DeviceLab) =>
  l
    .calls()
    .filter((c) => c.tool === "adb")
    .map((c) => c.argv.slice(2).join(" "));
const artifacts = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
        .sort()
    : [];

describe("an instrumentation step with API.md §14's options", () => {
  it("runs through the orchestrator with environment, extra APKs, pushed files, pulls, coverage, always_run and retries", async () => {
    const { lab, ctx } = await setUp();
    const outcome = await runInstrumentationStep(
      step({
        use_orchestrator: true,
        clear_package_data: true,
        environment: { "user.name": "ann" },
        additional_apks: ["helper.apk"],
        push: [{ file: "users.json", to: "/sdcard/Download/users.json" }],
        pull: ["/sdcard/Pictures/screenshots", "/sdcard/allure-results", "/sdcard/not-there"],
        pull_filter: [".*\\.png$"],
        coverage: true,
        always_run: [setupClass],
        retry_failed_tests: 1,
      }),
      ctx,
    );
    const commands = adbCommands(lab);
    // Installed before the app: the orchestrator, its services and the extra APK; all with -r -t -g.
    const installs = commands.filter((c) => c.startsWith("install "));
    expect(installs.map((c) => c.split("/").at(-1))).toEqual([
      "orchestrator-1.5.1.apk",
      "test-services-1.5.0.apk",
      "extra-helper.apk",
      "com.example.basic.apk",
      "com.example.basic.test.apk",
    ]);
    for (const install of installs) expect(install).toMatch(/^install -r -t -g /);
    expect(Object.keys(lab.installed(SERIAL)).sort()).toContain("com.example.helper");
    // Pushed after the install, before any test ran.
    const push = commands.findIndex((c) => c.endsWith(" /sdcard/Download/users.json"));
    expect(push).toBeGreaterThan(commands.findLastIndex((c) => c.startsWith("install ")));
    expect(lab.files(SERIAL)["/sdcard/Download/users.json"]?.toString()).toBe('{"users":["ann"]}');

    // Listed straight from the runner; every run through the orchestrator's documented command.
    const runs = commands.filter((c) => c.includes("am instrument"));
    expect(runs[0]).toMatch(/^shell am instrument -w -r -e 'log' 'true' /);
    for (const run of runs.slice(1)) {
      expect(run).toMatch(
        /^shell CLASSPATH=\$\(pm path androidx\.test\.services\) app_process \/ androidx\.test\.services\.shellexecutor\.ShellMain am instrument -r -w -e targetInstrumentation 'com\.example\.basic\.test\/androidx\.test\.runner\.AndroidJUnitRunner' -e clearPackageData true /,
      );
      expect(run).toContain("-e 'user.name' 'ann'");
      expect(run).toContain(
        "-e 'coverage' 'true' -e 'coverageFilePath' '/sdcard/Download/testbay-coverage/'",
      );
    }
    // always_run first, then the rest without it; the flaky test and the crashed one rerun alone.
    expect(runs[1]).toContain(`-e 'class' '${setupClass}'`);
    expect(runs[2]).toContain(`-e 'notClass' '${setupClass}'`);
    expect(runs.slice(3).map((r) => /-e 'class' '([^']+)'/.exec(r)?.[1])).toEqual([
      `${login}#flaky`,
      `${cart}#addsItem`,
    ]);

    // A crash fails only its test under the orchestrator; the flaky one passes on its rerun.
    expect(ctx.cases.map((c) => `${c.name} ${c.status} ${c.retry}`)).toEqual([
      "seeds passed 0",
      "signsIn passed 0",
      "flaky failed 0",
      "addsItem failed 0",
      "checksOut passed 0",
      "flaky passed 1",
      "addsItem failed 1",
    ]);
    expect(ctx.cases[3]?.details).toContain("Test instrumentation process crashed.");
    expect(outcome.status).toBe("failed");
    // clearPackageData: the orchestrator cleared the app before each test it ran.
    expect(lab.installed(SERIAL)["com.example.basic"]?.dataClears).toBe(1 + 7);

    // Pulled after the run although a test failed; the filter kept the PNGs; a missing path is a warning.
    expect(artifacts(ctx.artifactsDir)).toEqual([
      "coverage/0/com.example.basic.CartTest_checksOut.ec",
      "coverage/0/com.example.basic.LoginTest_flaky.ec",
      "coverage/0/com.example.basic.LoginTest_signsIn.ec",
      "coverage/0/com.example.basic.SetupTest_seeds.ec",
      "pulled/0/sdcard/Pictures/screenshots/checksOut.png",
      "pulled/0/sdcard/Pictures/screenshots/signsIn.png",
    ]);
    expect(
      readFileSync(join(ctx.artifactsDir, "pulled/0/sdcard/Pictures/screenshots/signsIn.png"), "utf8"),
    ).toBe("png-1");
    expect(ctx.lines("agent")).toContain(
      "warning: /sdcard/not-there is not on the device; nothing pulled from it",
    );
  });

  it("writes one coverage file per run without the orchestrator, each kept", async () => {
    const { ctx } = await setUp();
    await runInstrumentationStep(
      step({ coverage: true, filter: { classes: [login] }, retry_failed_tests: 1 }),
      ctx,
    );
    expect(artifacts(ctx.artifactsDir)).toEqual(["coverage/0/testbay-0-2.ec", "coverage/0/testbay-0.ec"]);
  });

  it("errors, saying how to get them, when the orchestrator's APKs are not in --android-tools", async () => {
    const { lab, ctx } = await setUp({ extra: { androidTools: null } });
    const outcome = await runInstrumentationStep(step({ use_orchestrator: true }), ctx);
    expect(outcome.status).toBe("errored");
    expect(outcome.message).toContain("androidx.test:orchestrator");
    expect(outcome.message).toContain("androidx.test.services:test-services");
    expect(outcome.message).toContain("--android-tools");
    expect(adbCommands(lab).filter((c) => c.startsWith("install "))).toEqual([]);
  });

  it("sets an emulator's orientation and locale before the run", async () => {
    const { lab, ctx } = await setUp({
      extra: { deviceSettings: { locale: "fr_FR", orientation: "landscape" } },
    });
    const outcome = await runInstrumentationStep(step({ filter: { classes: [cart] } }), ctx);
    expect(outcome.status).toBe("errored"); // addsItem crashes the run without the orchestrator
    const commands = adbCommands(lab);
    const locale = commands.indexOf("shell setprop persist.sys.locale fr-FR && setprop ctl.restart zygote");
    expect(locale).toBeGreaterThan(-1);
    expect(locale).toBeLessThan(commands.findIndex((c) => c.startsWith("install ")));
    expect(commands).toContain(
      "shell settings put system accelerometer_rotation 0 && settings put system user_rotation 1",
    );
    expect(ctx.lines("agent")).toContain("locale fr-FR (persist.sys.locale, framework restarted)");
  });

  it("runs on a physical device whose build locale is the one asked for", async () => {
    const { lab, ctx } = await setUp({
      serial: "2B121FDH200A7Q",
      extra: { deviceSettings: { locale: "en_US" } },
    });
    const outcome = await runInstrumentationStep(step({ filter: { classes: [login] } }), ctx);
    expect(outcome.deviceLost).toBeUndefined();
    expect(outcome.message ?? "").not.toMatch(/infrastructure/);
    expect(ctx.lines("agent")).toContain("locale en-US (already set)");
    expect(adbCommands(lab).some((c) => c.includes("setprop"))).toBe(false);
  });

  it("is an infrastructure error on a physical device whose locale differs", async () => {
    const { ctx } = await setUp({ serial: "2B121FDH200A7Q", extra: { deviceSettings: { locale: "de_DE" } } });
    const outcome = await runInstrumentationStep(step({}), ctx);
    expect(outcome.status).toBe("errored");
    expect(outcome.deviceLost).toBeUndefined();
    expect(outcome.message).toMatch(
      /^infrastructure: the device 2B121FDH200A7Q is a physical device and its locale is not de-DE/,
    );
  });
});
