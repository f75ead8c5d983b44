import { existsSync, readFileSync } from "node:fs";
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createDeviceLab, type DeviceLab } from "../../test/stand-ins/device-lab.ts";
import { runMaestroStep } from "./maestro-step.ts";
import type { Device } from "./step-types.ts";
import { ANDROID_BINARY, makeStepContext, type TestStepContext } from "./test-context.ts";

const APP = fileURLToPath(new URL("../../../server/test/fixtures/binaries/app-basic.apk", import.meta.url));
const SERIAL = "emulator-5554";
const EMULATOR: Device = { serial: SERIAL, platform: "android", model: "Pixel 7", os_version: "14" };
// biome-ignore lint/suspicious/noTemplateCurlyInString: maestro's own ${} placeholder, filled by -e APP_ID=…
const APP_ID = "${APP_ID}";
const LOGIN = `appId: ${APP_ID}\nname: Login\n---\n- launchApp\n- tapOn: Log in\n`;
const CHECKOUT = `appId: ${APP_ID}\nname: Checkout\n---\n- launchApp\n- assertVisible: FAIL Order confirmed\n`;

let lab: DeviceLab | undefined;
let ctx: TestStepContext | undefined;

afterEach(async () => {
  vi.unstubAllEnvs();
  await ctx?.cleanup();
  lab?.cleanup();
  ctx = undefined;
  lab = undefined;
});

async function setUp(device: Device | null = EMULATOR, sdk = 34) {
  lab = await createDeviceLab({ devices: [{ serial: SERIAL, model: "Pixel 7", sdk }], timeScale: 0.05 });
  for (const [name, value] of Object.entries(lab.env)) vi.stubEnv(name, value);
  ctx = await makeStepContext({
    device,
    appPath: async () => APP,
    binary: { ...ANDROID_BINARY, package_name: "com.example.basic" },
    packageName: "com.example.basic",
  });
  return { lab, ctx };
}

const commands = (l: DeviceLab) =>
  l
    .calls()
    .map((call) => `${call.tool} ${(call.argv[0] === "-s" ? call.argv.slice(2) : call.argv).join(" ")}`);

describe("runMaestroStep on the stateful stand-ins", () => {
  it("installs the app first, then runs the flows with APP_ID on that device", async () => {
    const { lab, ctx } = await setUp();
    const outcome = await runMaestroStep({ type: "maestro", flows: [LOGIN], record_video: "never" }, ctx);
    expect(outcome).toEqual({ status: "passed", message: null, exit_code: 0 });
    expect(lab.installed(SERIAL)["com.example.basic"]?.flags).toEqual(["-r", "-t", "-g"]);
    const run = commands(lab);
    const install = run.findIndex((c) => c.startsWith("adb install"));
    const maestro = run.findIndex((c) => c.startsWith("maestro"));
    expect(install).toBeGreaterThanOrEqual(0);
    expect(install).toBeLessThan(maestro);
    expect(run[install]).toMatch(/\.apk$/);
    expect(run[maestro]).toBe(
      `maestro --device ${SERIAL} test --format junit --output ${join(ctx.workDir, "maestro-report.xml")} -e APP_ID=com.example.basic ${join(ctx.workDir, "flows")}`,
    );
    expect(ctx.cases.map((c) => `${c.name} ${c.status}`)).toEqual(["Login passed"]);
  });

  it("sets the device entry's orientation and an emulator's locale before it installs the app", async () => {
    const { lab, ctx } = await setUp();
    ctx.deviceSettings = { locale: "de_DE", orientation: "landscape" };
    const outcome = await runMaestroStep({ type: "maestro", flows: [LOGIN], record_video: "never" }, ctx);
    expect(outcome.status).toBe("passed");
    const run = commands(lab);
    const rotation = run.indexOf(
      "adb shell settings put system accelerometer_rotation 0 && settings put system user_rotation 1",
    );
    const locale = run.indexOf("adb shell setprop persist.sys.locale de-DE && setprop ctl.restart zygote");
    const install = run.findIndex((c) => c.startsWith("adb install"));
    expect(rotation).toBeGreaterThanOrEqual(0);
    expect(locale).toBeGreaterThan(rotation);
    expect(install).toBeGreaterThan(locale);
  });

  it("fails when a flow failed, naming the device log and the video on the failure", async () => {
    const { ctx } = await setUp();
    const outcome = await runMaestroStep({ type: "maestro", flows: [LOGIN, CHECKOUT] }, ctx);
    expect(outcome).toMatchObject({ status: "failed", message: "1 of 2 test cases failed" });
    const failure = ctx.cases.find((c) => c.status === "failed");
    expect(failure).toMatchObject({
      name: "Checkout",
      message: expect.stringContaining("FAIL Order confirmed"),
    });
    expect(failure?.artifacts).toEqual([`device-${SERIAL}/logcat.txt`, `device-${SERIAL}/video/part-01.mp4`]);
    for (const name of failure?.artifacts ?? []) expect(existsSync(join(ctx.artifactsDir, name))).toBe(true);
    expect(ctx.cases.find((c) => c.status === "passed")?.artifacts).toBeUndefined();
  });

  it("clears the app's data after the install when asked", async () => {
    const { lab, ctx } = await setUp();
    await runMaestroStep({ type: "maestro", flows: [LOGIN], clear_package_data: true }, ctx);
    expect(lab.installed(SERIAL)["com.example.basic"]?.dataClears).toBe(1);
  });

  it("errors with the install failure and runs no flow when the app cannot be installed", async () => {
    const { lab, ctx } = await setUp(EMULATOR, 21);
    const outcome = await runMaestroStep({ type: "maestro", flows: [LOGIN] }, ctx);
    expect(outcome.status).toBe("errored");
    expect(outcome.message).toContain("INSTALL_FAILED_OLDER_SDK");
    expect(commands(lab).some((c) => c.startsWith("maestro"))).toBe(false);
  });

  it("on the host, without a device, installs nothing and leaves the device choice to maestro", async () => {
    const { lab, ctx } = await setUp(null);
    const outcome = await runMaestroStep({ type: "maestro", flows: [LOGIN] }, ctx);
    // Nothing installed the app, and the stand-in, like maestro, cannot launch an app that is not there.
    expect(outcome.status).toBe("failed");
    expect(ctx.cases[0]?.message).toContain("Unable to launch app com.example.basic");
    expect(commands(lab).filter((c) => c.startsWith("adb"))).toEqual([]);
    expect(commands(lab).find((c) => c.startsWith("maestro"))).toMatch(/^maestro test /);
  });

  it("errors when maestro wrote no report", async () => {
    const { ctx } = await setUp(null);
    vi.stubEnv("PATH", `${ctx.root}:${process.env.PATH}`);
    const fake = join(ctx.root, "maestro");
    await writeFile(fake, "#!/bin/sh\necho 'Unable to launch app com.example.basic' >&2\nexit 1\n");
    await chmod(fake, 0o755);
    expect(await runMaestroStep({ type: "maestro", flows: [LOGIN] }, ctx)).toEqual({
      status: "errored",
      message: "maestro wrote no report (exit code 1)",
      exit_code: 1,
    });
    expect(ctx.lines("stderr")).toEqual(["Unable to launch app com.example.basic"]);
  });

  it("errors when maestro is not installed", async () => {
    ctx = await makeStepContext();
    vi.stubEnv("PATH", ctx.root);
    const outcome = await runMaestroStep({ type: "maestro", flows: [LOGIN] }, ctx);
    expect(outcome.status).toBe("errored");
    expect(outcome.message).toMatch(/^maestro could not start: .*ENOENT/);
  });

  it("writes the flows in the plan's order", async () => {
    const { ctx } = await setUp();
    await runMaestroStep({ type: "maestro", flows: [LOGIN, CHECKOUT], record_video: "never" }, ctx);
    expect(readFileSync(join(ctx.workDir, "flows", "flow-02.yaml"), "utf8")).toBe(CHECKOUT);
  });
});
