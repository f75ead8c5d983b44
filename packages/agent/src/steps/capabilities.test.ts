import { delimiter, join } from "node:path";
import { describe, expect, it } from "vitest";
import { detectTools, runnableStepTypes } from "./capabilities.ts";
import type { Device } from "./step-types.ts";
import { FAKE_BIN_DIR, FIXTURES_DIR } from "./test-context.ts";
import { which } from "./which.ts";

const PHONE: Device = { serial: "2B161FDH2007TX", platform: "android", model: "Pixel_8", os_version: "14" };
const SIMULATOR: Device = {
  serial: "9EC90A99-6924-472D-8CDD-4D8234AB4779",
  platform: "ios",
  model: "iPhone 11",
  os_version: "14.0",
};
const none = {
  allowShell: false,
  adbAvailable: false,
  maestroAvailable: false,
  xcodeAvailable: false,
  devices: [],
};

describe("runnableStepTypes", () => {
  it("always allows inspect", () => {
    expect([...runnableStepTypes(none)]).toEqual(["inspect"]);
  });

  it("allows shell only when the operator allowed it", () => {
    expect(runnableStepTypes({ ...none, allowShell: true }).has("shell")).toBe(true);
  });

  it("allows instrumentation only with adb and an Android device", () => {
    expect(runnableStepTypes({ ...none, adbAvailable: true }).has("instrumentation")).toBe(false);
    expect(runnableStepTypes({ ...none, devices: [PHONE] }).has("instrumentation")).toBe(false);
    expect(runnableStepTypes({ ...none, adbAvailable: true, devices: [PHONE] }).has("instrumentation")).toBe(
      true,
    );
  });

  it("allows xcuitest only with xcrun and xcodebuild and an iOS device", () => {
    expect(runnableStepTypes({ ...none, xcodeAvailable: true }).has("xcuitest")).toBe(false);
    expect(runnableStepTypes({ ...none, devices: [SIMULATOR] }).has("xcuitest")).toBe(false);
    expect(runnableStepTypes({ ...none, xcodeAvailable: true, devices: [PHONE] }).has("xcuitest")).toBe(
      false,
    );
    const mac = runnableStepTypes({ ...none, xcodeAvailable: true, devices: [SIMULATOR] });
    expect(mac.has("xcuitest")).toBe(true);
    expect(mac.has("instrumentation")).toBe(false);
  });

  it("allows maestro when its CLI is on PATH", () => {
    expect([
      ...runnableStepTypes({
        allowShell: true,
        adbAvailable: true,
        maestroAvailable: true,
        xcodeAvailable: false,
        devices: [PHONE],
      }),
    ]).toEqual(["inspect", "shell", "instrumentation", "maestro"]);
  });

  it("allows appium only when the operator started the agent with --appium, and with a device", () => {
    expect(runnableStepTypes({ ...none, appiumAvailable: true }).has("appium")).toBe(false);
    expect(runnableStepTypes({ ...none, devices: [PHONE] }).has("appium")).toBe(false);
    expect(runnableStepTypes({ ...none, appiumAvailable: true, devices: [PHONE] }).has("appium")).toBe(true);
    expect(runnableStepTypes({ ...none, appiumAvailable: true, devices: [SIMULATOR] }).has("appium")).toBe(
      true,
    );
  });
});

describe("which", () => {
  it("finds an executable on PATH, in PATH order", async () => {
    expect(await which("adb", `/nonexistent${delimiter}${FAKE_BIN_DIR}`)).toBe(join(FAKE_BIN_DIR, "adb"));
  });

  it("returns null for a missing command and for a file that is not executable", async () => {
    expect(await which("adb", "/nonexistent")).toBeNull();
    expect(await which("README.md", FIXTURES_DIR)).toBeNull();
    expect(await which("transcripts", FIXTURES_DIR)).toBeNull();
  });

  it("checks a path with a slash directly", async () => {
    expect(await which(join(FAKE_BIN_DIR, "maestro"), "")).toBe(join(FAKE_BIN_DIR, "maestro"));
  });
});

describe("detectTools", () => {
  it("reports adb and maestro found on PATH", async () => {
    expect(await detectTools(FAKE_BIN_DIR)).toMatchObject({ adbAvailable: true, maestroAvailable: true });
    expect(await detectTools("/nonexistent")).toEqual({
      adbAvailable: false,
      maestroAvailable: false,
      xcodeAvailable: false,
    });
  });
});
