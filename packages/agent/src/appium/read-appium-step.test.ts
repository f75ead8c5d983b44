import { describe, expect, it } from "vitest";
import { readAppiumStep } from "./read-appium-step.ts";

describe("readAppiumStep", () => {
  it("reads the step the server makes from a new session", () => {
    expect(
      readAppiumStep({
        type: "appium",
        capabilities: { platformName: "Android", "appium:automationName": "UiAutomator2" },
        options: { idle_timeout_seconds: 90, max_duration_seconds: 1800, record_video: true },
      }),
    ).toEqual({
      type: "appium",
      capabilities: { platformName: "Android", "appium:automationName": "UiAutomator2" },
      options: { idle_timeout_seconds: 90, max_duration_seconds: 1800, record_video: true },
    });
    expect(readAppiumStep({ type: "appium", capabilities: {} }).options).toEqual({});
  });

  it.each([
    [{ type: "shell", run: "true" }, "not an appium step"],
    [null, "not an appium step"],
    [{ type: "appium" }, "no capabilities object"],
    [{ type: "appium", capabilities: [] }, "no capabilities object"],
    [{ type: "appium", capabilities: {}, options: "fast" }, "options are not an object"],
    [
      { type: "appium", capabilities: {}, options: { idle_timeout_seconds: 0 } },
      "options.idle_timeout_seconds",
    ],
    [
      { type: "appium", capabilities: {}, options: { max_duration_seconds: "30" } },
      "options.max_duration_seconds",
    ],
  ])("refuses %j", (step, why) => {
    expect(() => readAppiumStep(step)).toThrow(why);
  });
});
