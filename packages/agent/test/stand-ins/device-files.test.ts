/**
 * The adb stand-in's models for issue 29 (API.md §14): push and pull of files and directories, the
 * orchestrator's command, coverage files, rotation settings and an emulator's locale.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createDeviceLab, type DeviceLab, type Suite } from "./device-lab.ts";
import { run } from "./run.ts";

const BINARIES = fileURLToPath(new URL("../../../server/test/fixtures/binaries/", import.meta.url));
const TOOLS = fileURLToPath(new URL("../fixtures/tool-apks/", import.meta.url));
const APP = join(BINARIES, "app-basic.apk");
const TEST_APK = join(BINARIES, "app-basic-androidTest.apk");
const S = "emulator-5554";
const PHONE = "2B121FDH200A7Q";
const TARGET = "com.example.basic.test/androidx.test.runner.AndroidJUnitRunner";
const ORCHESTRATED = `CLASSPATH=$(pm path androidx.test.services) app_process / androidx.test.services.shellexecutor.ShellMain am instrument -r -w -e targetInstrumentation ${TARGET}`;
const ORCHESTRATOR = "androidx.test.orchestrator/.AndroidTestOrchestrator";
const login = "com.example.basic.LoginTest";

const SUITE: Suite = {
  tests: [
    { class: login, method: "signsIn", outcome: "pass", duration_ms: 100 },
    { class: login, method: "crashes", outcome: "crash", duration_ms: 100 },
    { class: login, method: "rejects", outcome: "fail", duration_ms: 100 },
    { class: "com.example.basic.CartTest", method: "addsItem", outcome: "pass", duration_ms: 100 },
  ],
};

let lab: DeviceLab;
afterEach(() => lab?.cleanup());

async function makeLab(options: { sdk?: number; serial?: string } = {}) {
  lab = await createDeviceLab({
    devices: [
      {
        serial: options.serial ?? S,
        model: "Pixel 7",
        sdk: options.sdk ?? 34,
        ...(options.serial ? { usb: "1-1" } : {}),
      },
    ],
    suites: { "com.example.basic.test": SUITE },
    timeScale: 0.01,
  });
  return lab;
}

const adb = (...args: string[]) => run(lab, "adb", ["-s", S, ...args]);

async function installApps(tools: boolean) {
  expect((await adb("install", "-r", APP)).code).toBe(0);
  expect((await adb("install", "-r", "-t", TEST_APK)).code).toBe(0);
  if (tools) {
    expect((await adb("install", "-r", "-t", join(TOOLS, "orchestrator-1.5.1.apk"))).code).toBe(0);
    expect((await adb("install", "-r", "-t", join(TOOLS, "test-services-1.5.0.apk"))).code).toBe(0);
  }
}

/** The status codes of each test's end block, in order, as "Class#method code". */
function ends(stdout: string): string[] {
  const ended: string[] = [];
  const blocks = stdout.split(/(?<=INSTRUMENTATION_STATUS_CODE: -?\d+\n)/);
  for (const block of blocks) {
    const code = /INSTRUMENTATION_STATUS_CODE: (-?\d+)/.exec(block)?.[1];
    if (code === undefined || code === "1") continue;
    const cls = /INSTRUMENTATION_STATUS: class=(.*)/.exec(block)?.[1];
    const test = /INSTRUMENTATION_STATUS: test=(.*)/.exec(block)?.[1];
    ended.push(`${cls}#${test} ${code}`);
  }
  return ended;
}

describe("adb push and pull", () => {
  it("pushes a file and a directory, and pulls them back with the per-path summary", async () => {
    await makeLab();
    const local = mkdtempSync(join(tmpdir(), "push-"));
    writeFileSync(join(local, "users.json"), '{"users":[]}');
    mkdirSync(join(local, "fixtures", "img"), { recursive: true });
    writeFileSync(join(local, "fixtures", "a.txt"), "a");
    writeFileSync(join(local, "fixtures", "img", "b.png"), "bb");

    const file = await adb("push", join(local, "users.json"), "/sdcard/Download/users.json");
    expect(file.code).toBe(0);
    expect(file.stdout).toMatch(
      /users\.json: 1 file pushed, 0 skipped\. [\d.]+ MB\/s \(12 bytes in [\d.]+s\)\n$/,
    );
    const dir = await adb("push", join(local, "fixtures"), "/sdcard/");
    expect(dir.stdout).toMatch(/fixtures: 2 files pushed, 0 skipped\./);
    expect(Object.keys(lab.files(S)).sort()).toEqual([
      "/sdcard/Download/users.json",
      "/sdcard/fixtures/a.txt",
      "/sdcard/fixtures/img/b.png",
    ]);

    const into = mkdtempSync(join(tmpdir(), "pull-"));
    const pulled = await adb("pull", "/sdcard/fixtures", into);
    expect(pulled.code).toBe(0);
    expect(pulled.stdout).toMatch(/^\/sdcard\/fixtures: 2 files pulled, 0 skipped\./);
    expect(readFileSync(join(into, "fixtures", "img", "b.png"), "utf8")).toBe("bb");
    const one = await adb("pull", "/sdcard/Download/users.json", into);
    expect(one.stdout).toMatch(/1 file pulled/);
    expect(readdirSync(into).sort()).toEqual(["fixtures", "users.json"]);
  });

  it("refuses a missing remote path as adb does: stat v2 devices and older ones", async () => {
    await makeLab();
    const into = mkdtempSync(join(tmpdir(), "pull-"));
    const modern = await adb("pull", "/sdcard/allure-results", into);
    expect(modern.code).toBe(1);
    expect(modern.stderr).toBe(
      "adb: error: failed to stat remote object '/sdcard/allure-results': No such file or directory\n",
    );
    lab.cleanup();
    await makeLab({ sdk: 25 });
    const old = await adb("pull", "/sdcard/allure-results", into);
    expect(old.stderr).toBe("adb: error: remote object '/sdcard/allure-results' does not exist\n");
  });

  it("refuses a missing local file for push", async () => {
    await makeLab();
    const pushed = await adb("push", "/nonexistent/users.json", "/sdcard/");
    expect(pushed.code).toBe(1);
    expect(pushed.stderr).toBe(
      "adb: error: cannot stat '/nonexistent/users.json': No such file or directory\n",
    );
  });
});

describe("AndroidX Test Orchestrator's command", () => {
  it("runs each test in its own instrumentation: a crash fails that test and the run goes on", async () => {
    await makeLab();
    await installApps(true);
    const ran = await adb("shell", `${ORCHESTRATED} ${ORCHESTRATOR}`);
    expect(ran.code).toBe(0);
    expect(ends(ran.stdout)).toEqual([
      `${login}#signsIn 0`,
      `${login}#crashes -2`,
      `${login}#rejects -2`,
      "com.example.basic.CartTest#addsItem 0",
    ]);
    // The crashed test's stack is the message alone (no Throwable class, no frames), newline-ended as
    // ParcelableFailure leaves it, hence the empty line after it.
    expect(ran.stdout).toContain(
      `INSTRUMENTATION_STATUS: stack=Test instrumentation process crashed. Check ${login}#crashes.txt for details\n\nINSTRUMENTATION_STATUS: stream=\nError in crashes(${login}):\nTest instrumentation process crashed.`,
    );
    expect(ran.stdout).toMatch(/INSTRUMENTATION_STATUS: numtests=4\n/);
    expect(ran.stdout).toMatch(/FAILURES!!!\nTests run: 4, {2}Failures: 2\n\n\nINSTRUMENTATION_CODE: -1\n$/);
  });

  it("clears the app and the test package between tests with clearPackageData", async () => {
    await makeLab();
    await installApps(true);
    await adb("shell", `${ORCHESTRATED} -e clearPackageData true -e class ${login}#signsIn ${ORCHESTRATOR}`);
    expect(lab.installed(S)["com.example.basic"]?.dataClears).toBe(1);
    expect(lab.installed(S)["com.example.basic.test"]?.dataClears).toBe(1);
    await adb(
      "shell",
      `${ORCHESTRATED} -e clearPackageData true -e package com.example.basic ${ORCHESTRATOR}`,
    );
    expect(lab.installed(S)["com.example.basic"]?.dataClears).toBe(5);
  });

  it("writes one coverage file per test into coverageFilePath", async () => {
    await makeLab();
    await installApps(true);
    await adb(
      "shell",
      `${ORCHESTRATED} -e coverage true -e coverageFilePath /sdcard/Download/cov/ -e notClass ${login}#crashes ${ORCHESTRATOR}`,
    );
    const files = Object.keys(lab.files(S)).sort();
    expect(files).toEqual([
      "/sdcard/Download/cov/com.example.basic.CartTest#addsItem.ec",
      `/sdcard/Download/cov/${login}#rejects.ec`,
      `/sdcard/Download/cov/${login}#signsIn.ec`,
    ]);
    // JaCoCo's execution data header: block 0x01, magic 0xC0C0, version 0x1007.
    expect([...(lab.files(S)[files[0] as string] ?? Buffer.alloc(0)).subarray(0, 5)]).toEqual([
      1, 0xc0, 0xc0, 0x10, 0x07,
    ]);
  });

  it("cannot start without the test services, and says so without the orchestrator", async () => {
    await makeLab();
    await installApps(false);
    const noServices = await adb("shell", `${ORCHESTRATED} ${ORCHESTRATOR}`);
    // As recorded: app_process aborts ("Aborted", android/testing-samples#477) and logcat names the class it
    // could not find (android/android-test#748).
    expect(noServices.code).toBe(134);
    expect(noServices.stdout).toBe("Aborted\n");
    expect((await adb("logcat", "-d")).stdout).toContain(
      "E appproc : ERROR: could not find class 'androidx.test.services.shellexecutor.ShellMain'",
    );
    expect((await adb("install", "-r", join(TOOLS, "test-services-1.5.0.apk"))).code).toBe(0);
    const noOrchestrator = await adb("shell", `${ORCHESTRATED} ${ORCHESTRATOR}`);
    expect(noOrchestrator.stdout).toContain(
      "INSTRUMENTATION_STATUS: Error=Unable to find instrumentation info for: ComponentInfo{androidx.test.orchestrator/androidx.test.orchestrator.AndroidTestOrchestrator}",
    );
  });
});

describe("coverage without the orchestrator", () => {
  it("dumps one file at coverageFile when the run finishes and says where in the result", async () => {
    await makeLab();
    await installApps(false);
    const ran = await adb(
      "shell",
      `am instrument -w -r -e coverage true -e coverageFile /sdcard/Download/testbay-0.ec -e class ${login}#signsIn ${TARGET}`,
    );
    expect(ran.stdout).toContain("INSTRUMENTATION_RESULT: coverageFilePath=/sdcard/Download/testbay-0.ec\n");
    expect(ran.stdout).toContain("Generated code coverage data to /sdcard/Download/testbay-0.ec");
    expect(Object.keys(lab.files(S))).toContain("/sdcard/Download/testbay-0.ec");
  });
});

describe("rotation and locale", () => {
  it("keeps system settings, null when unset", async () => {
    await makeLab();
    expect((await adb("shell", "settings get system user_rotation")).stdout).toBe("null\n");
    expect(
      (
        await adb(
          "shell",
          "settings put system accelerometer_rotation 0 && settings put system user_rotation 1",
        )
      ).code,
    ).toBe(0);
    expect((await adb("shell", "settings get system user_rotation")).stdout).toBe("1\n");
    expect((await adb("shell", "settings get system accelerometer_rotation")).stdout).toBe("0\n");
  });

  it("changes an emulator's locale through persist.sys.locale and a framework restart", async () => {
    await makeLab();
    expect((await adb("shell", "setprop persist.sys.locale fr-FR && setprop ctl.restart zygote")).code).toBe(
      0,
    );
    // While the framework restarts, boot is not complete and the package service is away.
    expect((await adb("shell", "getprop sys.boot_completed")).stdout).toBe("\n");
    expect((await adb("shell", "pm path android")).stderr).toBe("cmd: Can't find service: package\n");
    expect((await adb("shell", "getprop sys.boot_completed")).stdout).toBe("\n");
    expect((await adb("shell", "getprop sys.boot_completed")).stdout).toBe("1\n");
    expect((await adb("shell", "pm path android")).stdout).toBe(
      "package:/system/framework/framework-res.apk\n",
    );
    expect((await adb("shell", "getprop persist.sys.locale")).stdout).toBe("fr-FR\n");
  });

  it("refuses persist.* properties on a physical device", async () => {
    await makeLab({ serial: PHONE });
    const set = await run(lab, "adb", ["-s", PHONE, "shell", "setprop persist.sys.locale fr-FR"]);
    expect(set.code).toBe(1);
    expect(set.stderr).toBe(
      "setprop: Failed to set property 'persist.sys.locale' to 'fr-FR'. See dmesg for error reason.\n",
    );
  });
});
