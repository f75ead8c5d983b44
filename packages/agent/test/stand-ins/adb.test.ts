import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { inflateSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { createDeviceLab, type DeviceLab, type Suite } from "./device-lab.ts";
import { run, start, until } from "./run.ts";

const BINARIES = fileURLToPath(new URL("../../../server/test/fixtures/binaries/", import.meta.url));
const APP = join(BINARIES, "app-basic.apk");
const TEST_APK = join(BINARIES, "app-basic-androidTest.apk");
const S = "emulator-5554";
const COMPONENT = "com.example.basic.test/androidx.test.runner.AndroidJUnitRunner";
const PIXEL = { serial: S, model: "Pixel 7", release: "14", sdk: 34 };

const SUITE: Suite = {
  tests: [
    {
      class: "com.example.basic.LoginTest",
      method: "signsIn",
      outcome: "pass",
      duration_ms: 300,
      logcat: ["D/Login: form shown"],
    },
    {
      class: "com.example.basic.LoginTest",
      method: "rejectsBadPassword",
      outcome: "fail",
      duration_ms: 100,
      stack:
        "java.lang.AssertionError: expected:<1> but was:<2>\n\tat com.example.basic.LoginTest.rejectsBadPassword(LoginTest.kt:30)\n",
    },
    { class: "com.example.basic.CartTest", method: "later", outcome: "ignored" },
    { class: "com.example.basic.CartTest", method: "onTablet", outcome: "assumption", duration_ms: 10 },
  ],
};

let lab: DeviceLab;
afterEach(() => lab?.cleanup());

async function labWithApps(suite: Suite = SUITE, timeScale = 0.01) {
  lab = await createDeviceLab({ devices: [PIXEL], suites: { "com.example.basic.test": suite }, timeScale });
  expect((await run(lab, "adb", ["-s", S, "install", "-r", APP])).code).toBe(0);
  expect((await run(lab, "adb", ["-s", S, "install", "-r", "-t", TEST_APK])).code).toBe(0);
  return lab;
}

function pkgOn(serial: string, name: string) {
  const pkg = lab.installed(serial)[name];
  if (!pkg) throw new Error(`${name} is not installed on ${serial}`);
  return pkg;
}

function fileOn(serial: string, path: string) {
  const file = lab.files(serial)[path];
  if (!file) throw new Error(`${path} is not on ${serial}`);
  return file;
}

function statusBlocks(stdout: string) {
  return stdout.split(/(?<=INSTRUMENTATION_STATUS_CODE: -?\d+\n)/).filter((b) => b.includes("STATUS_CODE"));
}

describe("adb devices and device selection", () => {
  it("lists devices in adb's columns, offline and unauthorized ones too", async () => {
    lab = await createDeviceLab({
      devices: [
        PIXEL,
        { serial: "2B161FDH2007TX", model: "Pixel 8", usb: "1-1", product: "shiba", device: "shiba" },
        { serial: "emulator-5556", state: "offline" },
        { serial: "R58M42ABCDE", state: "unauthorized", usb: "1-2" },
      ],
    });
    const { stdout, code } = await run(lab, "adb", ["devices", "-l"]);
    expect(code).toBe(0);
    expect(stdout).toBe(
      "List of devices attached\n" +
        "emulator-5554          device product:pixel_7 model:Pixel_7 device:pixel_7 transport_id:1\n" +
        "2B161FDH2007TX         device usb:1-1 product:shiba model:Pixel_8 device:shiba transport_id:2\n" +
        "emulator-5556          offline transport_id:3\n" +
        "R58M42ABCDE            unauthorized usb:1-2 transport_id:4\n\n",
    );
    expect((await run(lab, "adb", ["devices"])).stdout).toContain("emulator-5554          device\n");
    expect(await run(lab, "adb", ["-s", S, "get-state"])).toMatchObject({ code: 0, stdout: "device\n" });
    expect(await run(lab, "adb", ["-s", "emulator-5556", "get-state"])).toMatchObject({
      code: 1,
      stderr: "adb: device offline\n",
    });
    expect((await run(lab, "adb", ["-s", "R58M42ABCDE", "shell", "getprop"])).stderr).toMatch(
      /^adb: device unauthorized\.\nThis adb server's \$ADB_VENDOR_KEYS is not set/,
    );
    expect(await run(lab, "adb", ["-s", "nope", "get-state"])).toMatchObject({
      code: 1,
      stderr: "adb: device 'nope' not found\n",
    });
    expect(await run(lab, "adb", ["shell", "getprop"])).toMatchObject({
      code: 1,
      stderr: "adb: more than one device/emulator\n",
    });
  });

  it("answers getprop with the model's real spelling and every prop as [key]: [value]", async () => {
    lab = await createDeviceLab({ devices: [PIXEL] });
    expect((await run(lab, "adb", ["shell", "getprop", "ro.product.model"])).stdout).toBe("Pixel 7\n");
    const all = (await run(lab, "adb", ["-s", S, "shell", "getprop"])).stdout;
    expect(all).toContain("[ro.build.version.release]: [14]\n");
    expect(all).toContain("[ro.build.version.sdk]: [34]\n");
    expect(all).toContain("[ro.product.manufacturer]: [Google]\n");
    expect(all).toContain("[ro.product.cpu.abilist]: [x86_64,arm64-v8a]\n");
    expect((await run(lab, "adb", ["shell", "getprop", "no.such.prop"])).stdout).toBe("\n");
  });

  it("fails every command as adb does when no adb server can start, until the server is mended", async () => {
    lab = await createDeviceLab({ devices: [PIXEL] });
    lab.breakServer();
    const listed = await run(lab, "adb", ["devices", "-l"]);
    expect(listed).toMatchObject({ code: 1, stdout: "" });
    expect(listed.stderr).toBe(
      "* daemon not running; starting now at tcp:5037\n" +
        "ADB server didn't ACK\n" +
        "failed to create inotify fd: Too many open files\n" +
        "* failed to start daemon\n" +
        "adb: failed to check server version: cannot connect to daemon\n",
    );
    expect((await run(lab, "adb", ["-s", S, "shell", "getprop"])).stderr).toMatch(
      /cannot connect to daemon\n$/,
    );
    lab.mendServer();
    expect((await run(lab, "adb", ["devices", "-l"])).stdout).toContain("emulator-5554          device ");
  });

  it("refuses what it does not model, loudly", async () => {
    lab = await createDeviceLab({ devices: [PIXEL] });
    expect(await run(lab, "adb", ["-s", S, "shell", "dumpsys", "window"])).toMatchObject({
      code: 1,
      stderr: "stand-in adb: unsupported: shell dumpsys window\n",
    });
  });
});

describe("adb install", () => {
  it("records the package and instrumentation read from the APKs' real manifests", async () => {
    await labWithApps();
    const installed = lab.installed(S);
    expect(installed["com.example.basic"]).toMatchObject({
      versionCode: 42,
      versionName: "1.2.3",
      minSdkVersion: 24,
      testOnly: false,
      instrumentation: null,
      permissions: ["android.permission.INTERNET", "android.permission.CAMERA"],
      grantedPermissions: [],
      flags: ["-r"],
    });
    expect(installed["com.example.basic.test"]).toMatchObject({
      testOnly: true,
      flags: ["-r", "-t"],
      instrumentation: {
        name: "androidx.test.runner.AndroidJUnitRunner",
        targetPackage: "com.example.basic",
      },
    });
    expect((await run(lab, "adb", ["-s", S, "shell", "pm", "list", "instrumentation"])).stdout).toBe(
      "instrumentation:com.example.basic.test/androidx.test.runner.AndroidJUnitRunner (target=com.example.basic)\n",
    );
    expect((await run(lab, "adb", ["-s", S, "shell", "pm list packages"])).stdout.split("\n").sort()).toEqual(
      ["", "package:com.example.basic", "package:com.example.basic.test"],
    );
  });

  it("prints Performing Streamed Install then Success, and -g grants the requested permissions", async () => {
    lab = await createDeviceLab({ devices: [PIXEL] });
    expect(await run(lab, "adb", ["install", "-g", APP])).toMatchObject({
      code: 0,
      stdout: "Performing Streamed Install\nSuccess\n",
    });
    expect(pkgOn(S, "com.example.basic").grantedPermissions).toEqual([
      "android.permission.INTERNET",
      "android.permission.CAMERA",
    ]);
  });

  it("refuses as adb and PackageManager do", async () => {
    lab = await createDeviceLab({ devices: [PIXEL, { serial: "emulator-5556", sdk: 23, release: "6.0" }] });
    const scratch = mkdtempSync(join(tmpdir(), "stand-in-apk-"));
    const notApk = join(scratch, "garbage.apk");
    copyFileSync(join(BINARIES, "not-a-binary.bin"), notApk);
    const refusals: Array<[string[], RegExp]> = [
      [[join(BINARIES, "plain.zip")], /^adb: filename doesn't end \.apk or \.apex: .*plain\.zip\n$/],
      [[join(scratch, "missing.apk")], /^adb: failed to stat .*missing\.apk: No such file or directory\n$/],
      [
        [notApk],
        /^adb: failed to install .*garbage\.apk: Failure \[INSTALL_PARSE_FAILED_NOT_APK: Failed to parse /,
      ],
      [[TEST_APK], /^adb: failed to install .*: Failure \[INSTALL_FAILED_TEST_ONLY: installPackageLI\]\n$/],
    ];
    for (const [args, stderr] of refusals) {
      const ran = await run(lab, "adb", ["-s", S, "install", ...args]);
      expect(ran.code, args[0]).toBe(1);
      expect(ran.stdout).toBe("Performing Streamed Install\n");
      expect(ran.stderr).toMatch(stderr);
    }
    const old = await run(lab, "adb", ["-s", "emulator-5556", "install", APP]);
    expect(old.code).toBe(1);
    expect(old.stderr).toMatch(
      /Failure \[INSTALL_FAILED_OLDER_SDK: Failed parse during installPackageLI: .*Requires newer sdk version #24 \(current version is #23\)\]\n$/,
    );
    lab.preinstall(S, { package: "com.example.basic", versionCode: 100 });
    const downgrade = await run(lab, "adb", ["-s", S, "install", "-r", APP]);
    expect(downgrade.stderr).toMatch(
      /Failure \[INSTALL_FAILED_VERSION_DOWNGRADE: Downgrade detected: Update version code 42 is older than current 100\]/,
    );
    expect(pkgOn(S, "com.example.basic").versionCode).toBe(100);
    expect((await run(lab, "adb", ["-s", S, "install", "-r", "-d", APP])).code).toBe(0);
    expect(pkgOn(S, "com.example.basic").versionCode).toBe(42);
    expect(lab.installed("emulator-5556")).toEqual({});
  });

  it("pm clear answers Success for an installed package and Failed otherwise", async () => {
    await labWithApps();
    expect(await run(lab, "adb", ["-s", S, "shell", "pm", "clear", "com.example.basic"])).toMatchObject({
      code: 0,
      stdout: "Success\n",
    });
    expect(pkgOn(S, "com.example.basic").dataClears).toBe(1);
    expect(await run(lab, "adb", ["-s", S, "shell", "pm", "clear", "com.example.none"])).toMatchObject({
      code: 1,
      stderr: "Failed\n",
    });
  });
});

describe("am instrument", () => {
  it("refuses a component that is not installed, then a missing target app", async () => {
    lab = await createDeviceLab({ devices: [PIXEL], suites: { "com.example.basic.test": SUITE } });
    const before = await run(lab, "adb", ["-s", S, "shell", "am", "instrument", "-w", "-r", COMPONENT]);
    expect(before.stdout).toBe(
      "INSTRUMENTATION_STATUS: Error=Unable to find instrumentation info for: ComponentInfo{com.example.basic.test/androidx.test.runner.AndroidJUnitRunner}\n" +
        "INSTRUMENTATION_STATUS: id=ActivityManagerService\nINSTRUMENTATION_STATUS_CODE: -1\n",
    );
    expect(before.stderr).toMatch(
      /^android\.util\.AndroidException: INSTRUMENTATION_FAILED: com\.example\.basic\.test\/androidx\.test\.runner\.AndroidJUnitRunner\n\tat com\.android\.commands\.am\.Instrument\.run/,
    );
    await run(lab, "adb", ["-s", S, "install", "-t", TEST_APK]);
    const noTarget = await run(lab, "adb", ["-s", S, "shell", "am", "instrument", "-w", "-r", COMPONENT]);
    expect(noTarget.stdout).toContain(
      "Error=Unable to find instrumentation target package: com.example.basic\n",
    );
    const wrongRunner = await run(lab, "adb", [
      "-s",
      S,
      "shell",
      "am instrument -w -r com.example.basic.test/x.Runner",
    ]);
    expect(wrongRunner.stdout).toContain("ComponentInfo{com.example.basic.test/x.Runner}");
  });

  it("writes AndroidJUnitRunner's raw transcript for pass, fail, ignored and assumption", async () => {
    await labWithApps();
    const ran = await run(lab, "adb", ["-s", S, "shell", "am", "instrument", "-w", "-r", COMPONENT]);
    expect(ran.code).toBe(0);
    const blocks = statusBlocks(ran.stdout);
    expect(blocks).toHaveLength(8);
    expect(blocks[0]).toBe(
      "INSTRUMENTATION_STATUS: class=com.example.basic.LoginTest\nINSTRUMENTATION_STATUS: current=1\n" +
        "INSTRUMENTATION_STATUS: id=AndroidJUnitRunner\nINSTRUMENTATION_STATUS: numtests=4\n" +
        "INSTRUMENTATION_STATUS: stream=\ncom.example.basic.LoginTest:\nINSTRUMENTATION_STATUS: test=signsIn\n" +
        "INSTRUMENTATION_STATUS_CODE: 1\n",
    );
    expect(blocks[1]).toContain(
      "INSTRUMENTATION_STATUS: stream=.\nINSTRUMENTATION_STATUS: test=signsIn\nINSTRUMENTATION_STATUS_CODE: 0\n",
    );
    expect(blocks[2]).toContain(
      "INSTRUMENTATION_STATUS: stream=\nINSTRUMENTATION_STATUS: test=rejectsBadPassword\n",
    );
    expect(blocks[3]).toBe(
      "INSTRUMENTATION_STATUS: class=com.example.basic.LoginTest\nINSTRUMENTATION_STATUS: current=2\n" +
        "INSTRUMENTATION_STATUS: id=AndroidJUnitRunner\nINSTRUMENTATION_STATUS: numtests=4\n" +
        "INSTRUMENTATION_STATUS: stack=java.lang.AssertionError: expected:<1> but was:<2>\n" +
        "\tat com.example.basic.LoginTest.rejectsBadPassword(LoginTest.kt:30)\n\n" +
        "INSTRUMENTATION_STATUS: stream=\nError in rejectsBadPassword(com.example.basic.LoginTest):\n" +
        "java.lang.AssertionError: expected:<1> but was:<2>\n" +
        "\tat com.example.basic.LoginTest.rejectsBadPassword(LoginTest.kt:30)\n\n" +
        "INSTRUMENTATION_STATUS: test=rejectsBadPassword\nINSTRUMENTATION_STATUS_CODE: -2\n",
    );
    expect(blocks[4]).toContain("stream=\ncom.example.basic.CartTest:\n");
    expect(blocks[5]).toMatch(
      /stream=\nINSTRUMENTATION_STATUS: test=later\nINSTRUMENTATION_STATUS_CODE: -3\n$/,
    );
    expect(blocks[7]).toMatch(
      /stack=org\.junit\.AssumptionViolatedException: .*\n[\s\S]*INSTRUMENTATION_STATUS_CODE: -4\n$/,
    );
    const tail = ran.stdout.slice(ran.stdout.indexOf("INSTRUMENTATION_RESULT"));
    expect(tail).toMatch(
      /^INSTRUMENTATION_RESULT: stream=\n\nTime: \d+(\.\d{1,3})?\nThere was 1 failure:\n1\) rejectsBadPassword\(com\.example\.basic\.LoginTest\)\njava\.lang\.AssertionError: expected:<1> but was:<2>\n\tat .*\n\nFAILURES!!!\nTests run: 3, {2}Failures: 1\n\n\nINSTRUMENTATION_CODE: -1\n$/,
    );
  });

  it("reports the time that really elapsed, scaled as configured", async () => {
    await labWithApps({ tests: [{ class: "a.B", method: "c", outcome: "pass", duration_ms: 2000 }] }, 0.1);
    const t0 = Date.now();
    const ran = await run(lab, "adb", ["-s", S, "shell", "am", "instrument", "-w", "-r", COMPONENT]);
    const wall = Date.now() - t0;
    const reported = Number(/Time: ([\d.]+)/.exec(ran.stdout)?.[1]) * 1000;
    expect(reported).toBeGreaterThanOrEqual(195);
    expect(reported).toBeLessThanOrEqual(wall);
    expect(ran.stdout).toContain("\nOK (1 test)\n\n\nINSTRUMENTATION_CODE: -1\n");
  });

  it("-e log true lists every test as started then passed without running any", async () => {
    await labWithApps({ tests: [...SUITE.tests.map((t) => ({ ...t, duration_ms: 60_000 }))] }, 1);
    const ran = await run(lab, "adb", [
      "-s",
      S,
      "shell",
      "am",
      "instrument",
      "-w",
      "-r",
      "-e",
      "log",
      "true",
      COMPONENT,
    ]);
    const codes = statusBlocks(ran.stdout).map((b) => /STATUS_CODE: (-?\d+)/.exec(b)?.[1]);
    expect(codes).toEqual(["1", "0", "1", "0", "1", "0", "1", "0"]);
    expect(ran.stdout).toContain("OK (4 tests)");
    expect(lab.logcat(S).join("\n")).not.toContain("form shown");
  });

  it("honours class, notClass, package, annotation, size and testFile filters", async () => {
    await labWithApps({
      tests: [
        {
          class: "com.example.basic.LoginTest",
          method: "a",
          outcome: "pass",
          annotations: ["androidx.test.filters.SmallTest"],
        },
        { class: "com.example.basic.LoginTest", method: "b", outcome: "pass", size: "large" },
        {
          class: "com.example.basic.cart.CartTest",
          method: "c",
          outcome: "pass",
          annotations: ["com.example.Smoke"],
        },
      ],
    });
    const names = async (...extras: string[]) => {
      const ran = await run(lab, "adb", [
        "-s",
        S,
        "shell",
        "am",
        "instrument",
        "-w",
        "-r",
        ...extras,
        COMPONENT,
      ]);
      return statusBlocks(ran.stdout)
        .filter((b) => b.endsWith("CODE: 0\n"))
        .map((b) => /test=(\w+)/.exec(b)?.[1]);
    };
    expect(
      await names("-e", "class", "com.example.basic.LoginTest#b,com.example.basic.cart.CartTest"),
    ).toEqual(["b", "c"]);
    expect(await names("-e", "notClass", "com.example.basic.LoginTest")).toEqual(["c"]);
    expect(await names("-e", "package", "com.example.basic.cart")).toEqual(["c"]);
    expect(await names("-e", "annotation", "com.example.Smoke")).toEqual(["c"]);
    expect(await names("-e", "notAnnotation", "com.example.Smoke")).toEqual(["a", "b"]);
    expect(await names("-e", "size", "small")).toEqual(["a"]);
    expect(await names("-e", "size", "large", "-e", "debug", "false", "-e", "whatever", "x")).toEqual(["b"]);

    const missing = await run(lab, "adb", [
      "-s",
      S,
      "shell",
      "am",
      "instrument",
      "-w",
      "-r",
      "-e",
      "testFile",
      "/data/local/tmp/tests.txt",
      COMPONENT,
    ]);
    expect(missing.stdout).toMatch(
      /testfile not found: \/data\/local\/tmp\/tests\.txt\n[\s\S]*INSTRUMENTATION_CODE: 0\n$/,
    );
    const list = join(mkdtempSync(join(tmpdir(), "stand-in-list-")), "tests.txt");
    writeFileSync(list, "com.example.basic.LoginTest#a\ncom.example.basic.cart.CartTest\n");
    expect((await run(lab, "adb", ["-s", S, "push", list, "/data/local/tmp/tests.txt"])).code).toBe(0);
    expect(await names("-e", "testFile", "/data/local/tmp/tests.txt")).toEqual(["a", "c"]);
  });

  it("reads a testFile line as RunnerArgs does: a class or method when it is one, else packages", async () => {
    await labWithApps({
      tests: [
        { class: "com.example.basic.LoginTest", method: "m[0]", outcome: "pass" },
        { class: "com.example.basic.LoginTest", method: "m[1]", outcome: "pass" },
        { class: "com.example.basic.cart.CartTest", method: "c", outcome: "pass" },
      ],
    });
    const ranWith = async (contents: string) => {
      const list = join(mkdtempSync(join(tmpdir(), "stand-in-list-")), "tests.txt");
      writeFileSync(list, contents);
      expect((await run(lab, "adb", ["-s", S, "push", list, "/data/local/tmp/t.txt"])).code).toBe(0);
      const ran = await run(lab, "adb", [
        "-s",
        S,
        "shell",
        "am",
        "instrument",
        "-w",
        "-r",
        "-e",
        "testFile",
        "/data/local/tmp/t.txt",
        COMPONENT,
      ]);
      return statusBlocks(ran.stdout)
        .filter((b) => b.endsWith("CODE: 0\n"))
        .map((b) => /test=(\S+)/.exec(b)?.[1]);
    };
    // "m[1]" is no Java identifier: the line is taken for a package, which no test is in.
    expect(await ranWith("com.example.basic.LoginTest#m[1]\n")).toEqual([]);
    expect(await ranWith("com.example.basic.LoginTest#m\n")).toEqual(["m[0]", "m[1]"]);
    expect(await ranWith("com.example.basic.cart\n")).toEqual(["c"]);
  });

  it("a test with outcomes behaves as its n-th run on that device says, the last outcome once they run out", async () => {
    await labWithApps({
      tests: [
        { class: "a.T", method: "flaky", outcomes: ["fail", "pass"] },
        { class: "a.T", method: "broken", outcomes: ["error", "fail"] },
        { class: "a.T", method: "steady", outcome: "pass" },
      ],
    });
    const codes = async (...extras: string[]) => {
      const ran = await run(lab, "adb", [
        "-s",
        S,
        "shell",
        "am",
        "instrument",
        "-w",
        "-r",
        ...extras,
        COMPONENT,
      ]);
      return statusBlocks(ran.stdout)
        .filter((b) => !b.endsWith("CODE: 1\n"))
        .map((b) => `${/test=(\w+)/.exec(b)?.[1]} ${/STATUS_CODE: (-?\d+)/.exec(b)?.[1]}`);
    };
    // A listing is not a run: it counts nothing.
    expect(await codes("-e", "log", "true")).toEqual(["flaky 0", "broken 0", "steady 0"]);
    expect(lab.testRuns(S)).toEqual({});
    expect(await codes()).toEqual(["flaky -2", "broken -2", "steady 0"]);
    expect(lab.logcat(S).join("\n")).toContain("java.lang.IllegalStateException: unexpected state");
    expect(await codes("-e", "class", "a.T#flaky")).toEqual(["flaky 0"]);
    expect(await codes("-e", "class", "a.T#flaky")).toEqual(["flaky 0"]);
    expect(await codes("-e", "class", "a.T#broken")).toEqual(["broken -2"]);
    expect(await codes("-e", "class", "a.T#broken")).toEqual(["broken -2"]);
    expect(lab.testRuns(S)).toEqual({ "a.T#flaky": 3, "a.T#broken": 3 });
    // Each device counts its own runs.
    lab.plug({ serial: "emulator-5556" });
    expect(lab.testRuns("emulator-5556")).toEqual({});
  });

  it("-e class Class#method runs every index of a parameterized method, or the one index named", async () => {
    await labWithApps({
      tests: [
        { class: "a.T", method: "signsIn[0]", outcome: "pass" },
        { class: "a.T", method: "signsIn[1]", outcome: "pass" },
        { class: "a.T", method: "signsInLater", outcome: "pass" },
      ],
    });
    const names = async (spec: string) => {
      const ran = await run(lab, "adb", [
        "-s",
        S,
        "shell",
        "am",
        "instrument",
        "-w",
        "-r",
        "-e",
        "class",
        spec,
        COMPONENT,
      ]);
      return statusBlocks(ran.stdout)
        .filter((b) => b.endsWith("CODE: 0\n"))
        .map((b) => /test=(\S+)/.exec(b)?.[1]);
    };
    expect(await names("a.T#signsIn")).toEqual(["signsIn[0]", "signsIn[1]"]);
    expect(await names("a.T#signsIn[1]")).toEqual(["signsIn[1]"]);
  });

  it("a crash ends the run mid-test as 'Process crashed.' with a FATAL EXCEPTION in logcat", async () => {
    await labWithApps({
      tests: [
        { class: "a.T", method: "one", outcome: "pass" },
        {
          class: "a.T",
          method: "two",
          outcome: "crash",
          stack: "java.lang.NullPointerException: boom\n\tat a.T.two(T.kt:9)",
        },
        { class: "a.T", method: "three", outcome: "pass" },
      ],
    });
    const ran = await run(lab, "adb", ["-s", S, "shell", "am", "instrument", "-w", "-r", COMPONENT]);
    expect(ran.stdout).toMatch(
      /INSTRUMENTATION_STATUS: test=two\nINSTRUMENTATION_STATUS_CODE: 1\nINSTRUMENTATION_RESULT: shortMsg=Process crashed\.\nINSTRUMENTATION_CODE: 0\n$/,
    );
    expect(ran.stdout).not.toContain("test=three");
    const log = lab.logcat(S).join("\n");
    expect(log).toMatch(
      / E AndroidRuntime: FATAL EXCEPTION: main\n.* E AndroidRuntime: Process: com\.example\.basic, PID: \d+\n.* E AndroidRuntime: java\.lang\.NullPointerException: boom/,
    );
    expect(log).toContain("I TestRunner: started: two(a.T)");
    expect(log).not.toContain("finished: two(a.T)");
  });

  it("a device that vanishes mid-run kills the shell, and every later command finds no device", async () => {
    await labWithApps({
      tests: [
        { class: "a.T", method: "one", outcome: "pass" },
        { class: "a.T", method: "two", outcome: "pass" },
      ],
      vanishAfterTests: 1,
    });
    const follower = start(lab, "adb", ["-s", S, "logcat", "-v", "threadtime"]);
    // The follower must be following before the device goes, or it would rightly find no device at all.
    await until(() => lab.calls().some((call) => call.argv.includes("logcat")), "logcat to start");
    const ran = await run(lab, "adb", ["-s", S, "shell", "am", "instrument", "-w", "-r", COMPONENT]);
    expect(ran.code).toBe(141);
    expect(ran.stdout).toMatch(/test=one\nINSTRUMENTATION_STATUS_CODE: 0\n$/);
    expect((await follower.done).code).toBe(141);
    expect(await run(lab, "adb", ["-s", S, "get-state"])).toMatchObject({
      code: 1,
      stderr: `adb: device '${S}' not found\n`,
    });
    expect((await run(lab, "adb", ["devices"])).stdout).toBe("List of devices attached\n\n");
    lab.plug(PIXEL);
    expect((await run(lab, "adb", ["-s", S, "get-state"])).stdout).toBe("device\n");
    expect(lab.installed(S)["com.example.basic"]).toBeDefined();
  });
});

describe("logcat", () => {
  it("follows new lines until killed, and -c clears what was there", async () => {
    await labWithApps({
      tests: [{ class: "a.T", method: "one", outcome: "pass", logcat: ["W/Shop: low stock"] }],
    });
    const follower = start(lab, "adb", ["-s", S, "logcat"]);
    await run(lab, "adb", ["-s", S, "shell", "am", "instrument", "-w", "-r", COMPONENT]);
    await until(() => follower.stdout().includes("run finished"), "the follower to see the run");
    expect(follower.stdout()).toMatch(
      /^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} +\d+ +\d+ I TestRunner: run started: 1 tests\n/,
    );
    expect(follower.stdout()).toMatch(/ W Shop {4}: low stock\n/);
    follower.child.kill("SIGTERM");
    expect((await follower.done).signal).toBe("SIGTERM");
    expect((await run(lab, "adb", ["-s", S, "logcat", "-d"])).stdout).toContain("started: one(a.T)");
    expect((await run(lab, "adb", ["-s", S, "logcat", "-c"])).code).toBe(0);
    expect((await run(lab, "adb", ["-s", S, "logcat", "-d"])).stdout).toBe("");
  });

  it("a follower ends when the device is unplugged", async () => {
    lab = await createDeviceLab({ devices: [PIXEL] });
    expect((await run(lab, "adb", ["-s", S, "shell", "log", "-t", "Probe", "hello"])).code).toBe(0);
    const follower = start(lab, "adb", ["-s", S, "logcat"]);
    // Following once it printed the buffer: unplugged earlier, adb finds no device and exits 1 instead (a
    // loaded machine started the follower that late once).
    await until(() => follower.stdout().includes("Probe"), "the follower to follow");
    lab.unplug(S);
    expect((await follower.done).code).toBe(141);
  });
});

function mp4Duration(bytes: Buffer): number | undefined {
  const at = bytes.indexOf("mvhd");
  return at < 0 ? undefined : bytes.readUInt32BE(at + 4 + 16);
}

describe("screenrecord, pull, push, rm, ls", () => {
  it("SIGINT via pkill finalises the MP4; SIGKILL leaves it without moov", async () => {
    lab = await createDeviceLab({ devices: [PIXEL], timeScale: 0.01 });
    const recording = start(lab, "adb", [
      "-s",
      S,
      "shell",
      "screenrecord",
      "--bit-rate",
      "4000000",
      "/sdcard/a.mp4",
    ]);
    await until(
      async () => (await run(lab, "adb", ["-s", S, "shell", "pidof", "screenrecord"])).code === 0,
      "screenrecord",
    );
    expect((await run(lab, "adb", ["-s", S, "shell", "pkill", "-INT", "screenrecord"])).code).toBe(0);
    expect((await recording.done).code).toBe(0);
    const dir = mkdtempSync(join(tmpdir(), "stand-in-pull-"));
    const pulled = await run(lab, "adb", ["-s", S, "pull", "/sdcard/a.mp4", join(dir, "a.mp4")]);
    expect(pulled.stdout).toMatch(
      /^\/sdcard\/a\.mp4: 1 file pulled, 0 skipped\. [\d.]+ MB\/s \(\d+ bytes in [\d.]+s\)\n$/,
    );
    const finished = readFileSync(join(dir, "a.mp4"));
    expect(finished.subarray(4, 8).toString("latin1")).toBe("ftyp");
    expect(finished.includes("moov")).toBe(true);
    expect(mp4Duration(finished)).toBeGreaterThan(0);

    const killed = start(lab, "adb", ["-s", S, "shell", "screenrecord", "/sdcard/b.mp4"]);
    await until(() => lab.files(S)["/sdcard/b.mp4"] !== undefined, "the recording file");
    killed.child.kill("SIGKILL");
    await killed.done;
    const broken = fileOn(S, "/sdcard/b.mp4");
    expect(broken.subarray(4, 8).toString("latin1")).toBe("ftyp");
    expect(broken.includes("moov")).toBe(false);
    expect((await run(lab, "adb", ["-s", S, "shell", "pidof", "screenrecord"])).code).toBe(1);
  });

  it("kill -2 with pidof stops it too; SIGTERM of the client leaves it unfinished", async () => {
    // At a tenth of real time the 180 s limit is 18 s: the kill comes first however loaded the machine (at a
    // hundredth, a CI run's recording reached its 1.8 s limit between pidof and kill, and kill found no process).
    lab = await createDeviceLab({ devices: [PIXEL], timeScale: 0.1 });
    const recording = start(lab, "adb", ["-s", S, "shell", "screenrecord /sdcard/c.mp4"]);
    let pid = "";
    await until(async () => {
      pid = (await run(lab, "adb", ["-s", S, "shell", "pidof", "screenrecord"])).stdout.trim();
      return pid !== "";
    }, "screenrecord");
    expect((await run(lab, "adb", ["-s", S, "shell", "kill", "-2", pid])).code).toBe(0);
    await recording.done;
    expect(mp4Duration(fileOn(S, "/sdcard/c.mp4"))).toBeGreaterThan(0);

    const terminated = start(lab, "adb", ["-s", S, "shell", "screenrecord", "/sdcard/d.mp4"]);
    await until(() => lab.files(S)["/sdcard/d.mp4"] !== undefined, "the recording file");
    terminated.child.kill("SIGTERM");
    await terminated.done;
    expect(fileOn(S, "/sdcard/d.mp4").includes("moov")).toBe(false);
  });

  it("stops by itself at the time limit, segment after segment; the limit's range depends on the release", async () => {
    lab = await createDeviceLab({
      devices: [PIXEL, { serial: "emulator-5556", sdk: 33, release: "13" }],
      timeScale: 0.01,
    });
    for (const name of ["seg1", "seg2"]) {
      const t0 = Date.now();
      const ran = await run(lab, "adb", [
        "-s",
        S,
        "shell",
        "screenrecord",
        "--time-limit",
        "5",
        `/sdcard/${name}.mp4`,
      ]);
      expect(ran.code).toBe(0);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(50);
      expect(mp4Duration(fileOn(S, `/sdcard/${name}.mp4`))).toBeGreaterThanOrEqual(45);
    }
    const tooLong = await run(lab, "adb", [
      "-s",
      "emulator-5556",
      "shell",
      "screenrecord",
      "--time-limit",
      "300",
      "/sdcard/x.mp4",
    ]);
    expect(tooLong).toMatchObject({ code: 2, stderr: "Time limit 300s outside acceptable range [1,180]\n" });
    expect(lab.files("emulator-5556")).toEqual({});
    const longOk = start(lab, "adb", [
      "-s",
      S,
      "shell",
      "screenrecord",
      "--time-limit",
      "300",
      "/sdcard/long.mp4",
    ]);
    await until(() => lab.files(S)["/sdcard/long.mp4"] !== undefined, "the long recording");
    await run(lab, "adb", ["-s", S, "shell", "pkill", "-2", "screenrecord"]);
    expect((await longOk.done).code).toBe(0);
  });

  it("pull, push, ls and rm behave like adb and toybox for present and missing files", async () => {
    lab = await createDeviceLab({ devices: [PIXEL] });
    expect(await run(lab, "adb", ["-s", S, "pull", "/sdcard/none.mp4", tmpdir()])).toMatchObject({
      code: 1,
      stderr: "adb: error: failed to stat remote object '/sdcard/none.mp4': No such file or directory\n",
    });
    const local = join(mkdtempSync(join(tmpdir(), "stand-in-push-")), "note.txt");
    writeFileSync(local, "hello");
    expect((await run(lab, "adb", ["-s", S, "push", local, "/sdcard/"])).stdout).toMatch(
      /note\.txt: 1 file pushed, 0 skipped\. .* \(5 bytes in/,
    );
    expect(fileOn(S, "/sdcard/note.txt").toString()).toBe("hello");
    expect((await run(lab, "adb", ["-s", S, "shell", "ls", "/sdcard"])).stdout).toBe("note.txt\n");
    expect((await run(lab, "adb", ["-s", S, "shell", "rm", "/sdcard/nope"])).stderr).toBe(
      "rm: /sdcard/nope: No such file or directory\n",
    );
    expect((await run(lab, "adb", ["-s", S, "shell", "rm", "-f", "/sdcard/nope"])).code).toBe(0);
    expect((await run(lab, "adb", ["-s", S, "shell", "rm", "/sdcard/note.txt"])).code).toBe(0);
    expect(lab.files(S)).toEqual({});
    expect(await run(lab, "adb", ["-s", S, "shell", "ls", "/sdcard/note.txt"])).toMatchObject({
      code: 1,
      stderr: "ls: /sdcard/note.txt: No such file or directory\n",
    });
  });
});

describe("screencap and the call log", () => {
  it("exec-out screencap -p writes a PNG that decodes to the screen size", async () => {
    lab = await createDeviceLab({ devices: [{ ...PIXEL, screen: [270, 600], screenColor: [10, 20, 30] }] });
    const { bytes, code } = await run(lab, "adb", ["-s", S, "exec-out", "screencap", "-p"]);
    expect(code).toBe(0);
    expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(bytes.subarray(12, 16).toString("latin1")).toBe("IHDR");
    expect([bytes.readUInt32BE(16), bytes.readUInt32BE(20), bytes[24], bytes[25]]).toEqual([270, 600, 8, 2]);
    const idats: Buffer[] = [];
    let at = 8;
    while (at < bytes.length) {
      const length = bytes.readUInt32BE(at);
      const type = bytes.subarray(at + 4, at + 8).toString("latin1");
      if (type === "IDAT") idats.push(bytes.subarray(at + 8, at + 8 + length));
      at += 12 + length;
    }
    const pixels = inflateSync(Buffer.concat(idats));
    expect(pixels.length).toBe(600 * (1 + 270 * 3));
    expect([...pixels.subarray(0, 4)]).toEqual([0, 10, 20, 30]);
  });

  it("records every call with its serial, in order", async () => {
    lab = await createDeviceLab({ devices: [PIXEL] });
    await run(lab, "adb", ["devices"]);
    await run(lab, "adb", ["-s", S, "shell", "getprop", "ro.product.model"]);
    expect(lab.calls().map(({ tool, argv, serial }) => ({ tool, argv, serial }))).toEqual([
      { tool: "adb", argv: ["devices"], serial: null },
      { tool: "adb", argv: ["-s", S, "shell", "getprop", "ro.product.model"], serial: S },
    ]);
  });
});
