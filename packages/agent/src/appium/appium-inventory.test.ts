import { describe, expect, it } from "vitest";
import { driversFromList } from "./appium-inventory.ts";

describe("driversFromList", () => {
  it("lists installed drivers by name with their automation and platform names", () => {
    // The shape of `appium driver list --installed --json` (Appium 3.8), trimmed.
    const listed = {
      xcuitest: {
        pkgName: "appium-xcuitest-driver",
        automationName: "XCUITest",
        platformNames: ["iOS", "tvOS"],
        installed: true,
      },
      uiautomator2: {
        pkgName: "appium-uiautomator2-driver",
        automationName: "UiAutomator2",
        platformNames: ["Android"],
        installed: true,
      },
      broken: { pkgName: "x", installed: true },
    };
    expect(driversFromList(listed)).toEqual([
      { name: "uiautomator2", automation_name: "UiAutomator2", platform_names: ["Android"] },
      { name: "xcuitest", automation_name: "XCUITest", platform_names: ["iOS", "tvOS"] },
    ]);
    expect(driversFromList(null)).toEqual([]);
  });
});
