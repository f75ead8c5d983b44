// The maestro stand-in on the Apple lab's simulators: the same flows, report and flaky rule as on adb devices,
// with the simulator's state (Booted or not, what simctl installed) deciding what maestro can do.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { type AppleLab, createAppleLab, runXc, writeAppBundle } from "./apple-lab.ts";
import { createDeviceLab, type DeviceLab } from "./device-lab.ts";

const A = "A2B3C4D5-0000-4000-8000-00000000000A";
const B = "B2B3C4D5-0000-4000-8000-00000000000B";
const RUNTIME = "com.apple.CoreSimulator.SimRuntime.iOS-18-0";
const SHOP = { bundleId: "com.example.shop", name: "Shop" };
const APK = fileURLToPath(new URL("../../../server/test/fixtures/binaries/app-basic.apk", import.meta.url));

let lab: AppleLab | undefined;
let adbLab: DeviceLab | undefined;
const dirs: string[] = [];
afterEach(() => {
  lab?.cleanup();
  adbLab?.cleanup();
  lab = adbLab = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

function flows(files: Record<string, string>): string {
  const dir = tempDir("stand-in-ios-flows-");
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

function maestro(env: Record<string, string>, args: string[]) {
  const child = spawn("maestro", args, { env: { ...process.env, ...env } });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on("data", (b: Buffer) => out.push(b));
  child.stderr.on("data", (b: Buffer) => err.push(b));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({
        code,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      }),
    );
  });
}

/** An Apple lab alone: FAKE_ADB_STATE is not set, as on a Mac agent without Android devices. */
function appleEnv(apple: AppleLab): Record<string, string> {
  const env: Record<string, string> = { ...apple.env };
  if ("FAKE_ADB_STATE" in process.env) env.FAKE_ADB_STATE = "";
  return env;
}

const LOGIN =
  // biome-ignore lint/suspicious/noTemplateCurlyInString: maestro's own ${} placeholder, read by the flow
  'appId: ${APP_ID}\nname: Login\n---\n- launchApp\n- tapOn: "Sign in"\n- assertVisible: "Welcome"\n';

const NOT_INSTALLED = (appId: string) =>
  `An error was encountered processing the command (domain=FBSOpenApplicationServiceErrorDomain, code=4):\nSimulator device failed to launch ${appId}.`;

describe("maestro test on an iOS simulator", () => {
  it("cannot launch an app simctl has not installed on the simulator, and can once it has", async () => {
    lab = await createAppleLab({
      simulators: [{ udid: A, name: "iPhone 16 Pro", runtime: RUNTIME, state: "Booted" }],
      timeScale: 0.01,
    });
    const dir = flows({ "login.yaml": LOGIN });
    const report = join(dir, "report.xml");
    const args = [
      "--device",
      A,
      "test",
      "--format",
      "junit",
      "--output",
      report,
      "-e",
      `APP_ID=${SHOP.bundleId}`,
      dir,
    ];

    const before = await maestro(appleEnv(lab), args);
    expect(before.code).toBe(1);
    expect(before.stdout).toContain(`[Failed] Login (0s) (${NOT_INSTALLED(SHOP.bundleId)})`);
    expect(before.stdout).toContain("1/1 Flow Failed");
    const failed = readFileSync(report, "utf8");
    expect(failed).toMatch(
      new RegExp(
        `^<\\?xml version='1\\.0' encoding='UTF-8'\\?>\\n<testsuites>\\n {2}<testsuite name="Test Suite" device="iPhone 16 Pro - iOS 18\\.0 - ${A}" tests="1" failures="1" `,
      ),
    );
    expect(failed).toContain(`<failure>${NOT_INSTALLED(SHOP.bundleId)}</failure>`);

    const app = writeAppBundle(tempDir("stand-in-ios-app-"), SHOP);
    expect((await runXc(lab, "xcrun", ["simctl", "install", A, app])).code).toBe(0);
    const after = await maestro(appleEnv(lab), args);
    expect(after.code).toBe(0);
    expect(after.stdout).toContain("1/1 Flow Passed");
    expect(readFileSync(report, "utf8")).toMatch(
      /tests="1" failures="0"[\s\S]*<testcase id="Login" [^>]*status="SUCCESS"\/>/,
    );
    // Recorded in the Apple lab's call log, after the install that made the difference.
    expect(lab.calls().map((c) => `${c.tool} ${c.argv.slice(0, 2).join(" ")}`)).toEqual([
      `maestro --device ${A}`,
      "xcrun simctl install",
      `maestro --device ${A}`,
    ]);
  });

  it("refuses a shut down simulator and an unknown UDID with maestro's text, and takes the simulator once booted", async () => {
    lab = await createAppleLab({
      simulators: [{ udid: A, name: "iPhone 16 Pro", runtime: RUNTIME, state: "Shutdown" }],
      timeScale: 0.01,
    });
    lab.preinstall(A, SHOP);
    const dir = flows({ "login.yaml": LOGIN });
    const args = (udid: string) => ["--device", udid, "test", "-e", `APP_ID=${SHOP.bundleId}`, dir];

    expect(await maestro(appleEnv(lab), args(A))).toEqual({
      code: 1,
      stdout: "",
      stderr: `Device ${A} was requested, but it is not connected.\n`,
    });
    const unknown = "FFFFFFFF-0000-4000-8000-000000000000";
    expect(await maestro(appleEnv(lab), args(unknown))).toMatchObject({
      code: 1,
      stderr: `Device ${unknown} was requested, but it is not connected.\n`,
    });
    // maestro compares the ids as given: a lower-case UDID is another id.
    expect((await maestro(appleEnv(lab), args(A.toLowerCase()))).code).toBe(1);
    expect(lab.testRuns(A)).toEqual({});

    expect((await runXc(lab, "xcrun", ["simctl", "boot", A])).code).toBe(0);
    const booted = await maestro(appleEnv(lab), args(A));
    expect(booted).toMatchObject({ code: 0 });
    expect(booted.stdout).toContain("[Passed] Login");
  });

  it("runs on the booted simulator when no device is named, and finds no device when none is booted", async () => {
    lab = await createAppleLab({
      simulators: [
        { udid: A, name: "iPhone 16 Pro", runtime: RUNTIME, state: "Shutdown" },
        { udid: B, name: "iPhone 16", runtime: RUNTIME, state: "Shutdown" },
      ],
      timeScale: 0.01,
    });
    const dir = flows({ "login.yaml": LOGIN });
    const report = join(dir, "r.xml");
    const args = ["test", "--format", "junit", "--output", report, "-e", `APP_ID=${SHOP.bundleId}`, dir];
    expect(await maestro(appleEnv(lab), args)).toMatchObject({
      code: 1,
      stderr: "No connected devices found\n",
    });

    lab.preinstall(B, SHOP);
    expect((await runXc(lab, "xcrun", ["simctl", "boot", B])).code).toBe(0);
    expect((await maestro(appleEnv(lab), args)).code).toBe(0);
    expect(readFileSync(report, "utf8")).toContain(`device="iPhone 16 - iOS 18.0 - ${B}"`);
  });

  it("counts a flaky flow's runs per simulator: 'FAIL 2x …' fails its first two runs on each", async () => {
    lab = await createAppleLab({
      simulators: [
        { udid: A, name: "iPhone 16 Pro", runtime: RUNTIME, state: "Booted" },
        { udid: B, name: "iPhone 16", runtime: RUNTIME, state: "Booted" },
      ],
      timeScale: 0.01,
    });
    lab.preinstall(A, SHOP);
    lab.preinstall(B, SHOP);
    const dir = flows({
      // biome-ignore lint/suspicious/noTemplateCurlyInString: maestro's own ${} placeholder, read by the flow
      "cart.yaml": 'appId: ${APP_ID}\nname: Cart\n---\n- launchApp\n- assertVisible: "FAIL 2x Cart shown"\n',
    });
    const on = async (udid: string) =>
      (
        await maestro(appleEnv(lab as AppleLab), [
          "--device",
          udid,
          "test",
          "-e",
          `APP_ID=${SHOP.bundleId}`,
          dir,
        ])
      ).code;

    const codes = [await on(A), await on(A), await on(A), await on(B)];
    expect(codes).toEqual([1, 1, 0, 1]);
    expect(lab.testRuns(A)).toEqual({ "flow:Cart": 3 });
    expect(lab.testRuns(B)).toEqual({ "flow:Cart": 1 });
  });

  it("fails the running flow and every later one when the simulator goes down under it (lab.crash)", async () => {
    lab = await createAppleLab({
      simulators: [{ udid: A, name: "iPhone 16 Pro", runtime: RUNTIME, state: "Booted" }],
      timeScale: 0.01,
    });
    lab.preinstall(A, SHOP);
    const dir = flows({
      "01-login.yaml": LOGIN,
      "02-again.yaml": LOGIN.replace("name: Login", "name: Again"),
    });
    const report = join(dir, "r.xml");
    lab.crash(A);
    const ran = await maestro(appleEnv(lab), [
      "--device",
      A,
      "test",
      "--format",
      "junit",
      "--output",
      report,
      "-e",
      `APP_ID=${SHOP.bundleId}`,
      dir,
    ]);
    expect(ran.code).toBe(1);
    expect(ran.stdout).toContain("2/2 Flows Failed");
    expect(
      readFileSync(report, "utf8").match(/<failure>Failed to connect to \/127\.0\.0\.1:7001<\/failure>/g),
    ).toHaveLength(2);
    expect(lab.simulators()[0]).toMatchObject({ state: "Shutdown", crashes: 1 });
  });

  it("looks a device up in both labs when both are set: an adb serial and a simulator UDID side by side", async () => {
    lab = await createAppleLab({
      simulators: [{ udid: A, name: "iPhone 16 Pro", runtime: RUNTIME, state: "Booted" }],
      timeScale: 0.01,
    });
    adbLab = await createDeviceLab({ devices: [{ serial: "emulator-5554" }], timeScale: 0.01 });
    const env = { ...adbLab.env, ...lab.env };
    const dir = flows({ "login.yaml": LOGIN });
    // The app is on the simulator only: Android's launch fails with its own text, the simulator's flow passes.
    lab.preinstall(A, { bundleId: "com.example.basic", name: "Basic" });
    const android = await maestro(env, [
      "--device",
      "emulator-5554",
      "test",
      "-e",
      "APP_ID=com.example.basic",
      dir,
    ]);
    expect(android.stdout).toContain("(Unable to launch app com.example.basic)");
    const ios = await maestro(env, ["--device", A, "test", "-e", "APP_ID=com.example.basic", dir]);
    expect(ios).toMatchObject({ code: 0 });

    expect((await runAdbInstall(adbLab)).code).toBe(0);
    expect(
      (await maestro(env, ["--device", "emulator-5554", "test", "-e", "APP_ID=com.example.basic", dir])).code,
    ).toBe(0);
    // Each lab records the calls made while its state dir was set.
    expect(adbLab.calls().filter((c) => c.tool === "maestro")).toHaveLength(3);
    expect(lab.calls().filter((c) => c.tool === ("maestro" as string))).toHaveLength(3);
    expect(adbLab.testRuns("emulator-5554")).toEqual({ "flow:Login": 2 });
    expect(lab.testRuns(A)).toEqual({ "flow:Login": 1 });
  });
});

function runAdbInstall(devices: DeviceLab) {
  const child = spawn("adb", ["-s", "emulator-5554", "install", APK], {
    env: { ...process.env, ...devices.env },
  });
  return new Promise<{ code: number | null }>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code }));
  });
}
