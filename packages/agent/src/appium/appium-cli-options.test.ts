import { describe, expect, it } from "vitest";
import { type AppiumCliFlags, appiumSettings, describeAppiumSettings } from "./appium-cli-options.ts";

function settingsOf(flags: AppiumCliFlags) {
  const settings = appiumSettings(flags);
  if (!settings) throw new Error("expected settings");
  return settings;
}

describe("appiumSettings", () => {
  it("is null without --appium", () => {
    expect(appiumSettings({})).toBeNull();
  });

  it("takes appium from PATH for a bare --appium, with the default ports and nothing loosened", () => {
    const settings = settingsOf({ appium: true });
    expect(settings).toEqual({
      executable: null,
      allowLocalApps: false,
      allowPrivateAppUrls: false,
      ports: { from: 4723, to: 4822 },
    });
    expect(describeAppiumSettings(settings)).toBe("appium: appium on PATH, ports 4723-4822");
  });

  it("takes the path, the flags and the ports given", () => {
    const settings = settingsOf({
      appium: "/opt/appium/bin/appium",
      appiumAllowLocalApps: true,
      appiumAllowPrivateAppUrls: true,
      appiumPorts: { from: 5000, to: 5099 },
    });
    expect(settings).toEqual({
      executable: "/opt/appium/bin/appium",
      allowLocalApps: true,
      allowPrivateAppUrls: true,
      ports: { from: 5000, to: 5099 },
    });
    expect(describeAppiumSettings(settings)).toBe(
      "appium: /opt/appium/bin/appium, ports 5000-5099, local app paths allowed, private app URLs allowed",
    );
  });

  it("refuses an --appium-… flag without --appium", () => {
    expect(() => appiumSettings({ appiumAllowLocalApps: true })).toThrow(
      "--appium-allow-local-apps need --appium",
    );
    expect(() => appiumSettings({ appiumPorts: { from: 5000, to: 5099 } })).toThrow("--appium-ports");
  });
});
