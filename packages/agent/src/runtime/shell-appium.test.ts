import { describe, expect, it } from "vitest";
import { shellStepCapabilities } from "./shell-appium.ts";

const ports = { driverPort: 25001, mjpegServerPort: 25002, proxyPort: 25003 };
const drivers = [
  { name: "uiautomator2", automation_name: "UiAutomator2", platform_names: ["Android"] },
  { name: "xcuitest", automation_name: "XCUITest", platform_names: ["iOS", "tvOS"] },
];

describe("shell steps' TESTBAY_APPIUM_CAPABILITIES", () => {
  it("names an Android device, its driver and its block's ports", () => {
    expect(shellStepCapabilities({ serial: "emulator-5554", platform: "android" }, ports, drivers)).toEqual({
      platformName: "Android",
      "appium:automationName": "UiAutomator2",
      "appium:udid": "emulator-5554",
      "appium:systemPort": 25001,
      "appium:mjpegServerPort": 25002,
      "appium:chromedriverPort": 25003,
    });
  });

  it("names an iOS device with XCUITest's ports", () => {
    expect(shellStepCapabilities({ serial: "UDID-1", platform: "ios" }, ports, drivers)).toEqual({
      platformName: "iOS",
      "appium:automationName": "XCUITest",
      "appium:udid": "UDID-1",
      "appium:wdaLocalPort": 25001,
      "appium:mjpegServerPort": 25002,
      "appium:webkitDebugProxyPort": 25003,
    });
  });

  it("leaves automationName out when no driver in APPIUM_HOME takes the platform", () => {
    const caps = shellStepCapabilities({ serial: "emulator-5554", platform: "android" }, ports, []);
    expect(caps).not.toHaveProperty("appium:automationName");
    expect(caps).toMatchObject({ platformName: "Android", "appium:udid": "emulator-5554" });
  });
});
