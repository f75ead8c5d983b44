import { describe, expect, it } from "vitest";
import { requirementsOf } from "../device-runs/index.ts";
import { readNewSession } from "./capabilities.ts";
import { sessionPlan } from "./session-plan.ts";

describe("a session's plan snapshot", () => {
  it("asks for the device the capabilities select and runs one appium step with Testbay's options", () => {
    const request = readNewSession({
      capabilities: {
        alwaysMatch: {
          platformName: "Android",
          "appium:deviceName": "Pixel 7",
          "appium:platformVersion": "14",
          "appium:udid": "someone-elses-device",
          "testbay:options": {
            name: "checkout",
            build: "1.4.2 (812)",
            idle_timeout_seconds: 30,
            record_video: false,
          },
        },
      },
    });
    const { device, plan } = sessionPlan(request);
    expect(device).toEqual({ platform: "android", model: "Pixel 7", os_version_prefix: "14" });
    // Its device run asks for Android 14 and 14.x, not for exactly 14 as a plan's os_version would.
    expect(requirementsOf(plan, { ...device })).toEqual({
      platform: "android",
      model: "Pixel 7",
      osVersion: null,
      osVersionPrefix: "14",
      needs: "appium",
      // A session names none of §13's selectors (docs/appium.md "Not there yet").
      selectors: {},
    });
    expect(plan).toEqual({
      name: "checkout",
      build: "1.4.2 (812)",
      device,
      steps: [
        {
          type: "appium",
          name: "Appium session",
          capabilities: {
            platformName: "Android",
            "appium:deviceName": "Pixel 7",
            "appium:platformVersion": "14",
          },
          options: { idle_timeout_seconds: 30, max_duration_seconds: 1800, record_video: false },
          ignored_capabilities: ["appium:udid"],
        },
      ],
      timeout_seconds: 1800 + 300,
      max_attempts: 1,
    });
  });

  it("leaves out what the capabilities do not select", () => {
    const { device, plan } = sessionPlan(
      readNewSession({ capabilities: { alwaysMatch: { platformName: "iOS" } } }),
    );
    expect(device).toEqual({ platform: "ios" });
    expect(plan.name).toBe("Appium session");
    expect(plan).not.toHaveProperty("build");
  });
});
