import { describe, expect, it } from "vitest";
import { buildSessionCapabilities, type SessionCapabilitiesInput } from "./session-capabilities.ts";
import { SessionNotCreatedError } from "./w3c-error.ts";

const android: SessionCapabilitiesInput = {
  requested: { platformName: "Android", "appium:automationName": "UiAutomator2" },
  device: { serial: "emulator-5554", platform: "android" },
  ports: { driverPort: 4724, mjpegServerPort: 4725, proxyPort: 4726 },
  installedAppPath: null,
  allowLocalApps: false,
  allowPrivateAppUrls: false,
};

function refusal(input: SessionCapabilitiesInput): SessionNotCreatedError {
  try {
    buildSessionCapabilities(input);
  } catch (error) {
    if (error instanceof SessionNotCreatedError) return error;
    throw error;
  }
  throw new Error("expected the capabilities to be refused");
}

describe("buildSessionCapabilities", () => {
  it("sends the W3C payload with the device's udid and the block's Android ports", () => {
    const { payload, appUrl, overridden } = buildSessionCapabilities(android);
    expect(payload).toEqual({
      capabilities: {
        alwaysMatch: {
          platformName: "Android",
          "appium:automationName": "UiAutomator2",
          "appium:udid": "emulator-5554",
          "appium:systemPort": 4724,
          "appium:mjpegServerPort": 4725,
          "appium:chromedriverPort": 4726,
          "appium:newCommandTimeout": 0,
        },
        firstMatch: [{}],
      },
    });
    expect(appUrl).toBeNull();
    expect(overridden).toEqual([]);
  });

  it("gives an iOS device the XCUITest ports", () => {
    const { payload } = buildSessionCapabilities({
      ...android,
      requested: { platformName: "iOS" },
      device: { serial: "00008030-001A", platform: "ios" },
    });
    expect(payload.capabilities.alwaysMatch).toMatchObject({
      "appium:udid": "00008030-001A",
      "appium:wdaLocalPort": 4724,
      "appium:mjpegServerPort": 4725,
      "appium:webkitDebugProxyPort": 4726,
    });
    expect(payload.capabilities.alwaysMatch).not.toHaveProperty("appium:systemPort");
  });

  it("replaces the udid and ports the client sent, also inside appium:options, and drops testbay: keys", () => {
    const { payload, overridden } = buildSessionCapabilities({
      ...android,
      requested: {
        platformName: "Android",
        "appium:udid": "someone-elses-phone",
        "appium:systemPort": 8200,
        "appium:wdaLocalPort": 8100,
        "appium:options": { chromedriverPort: 9515, deviceName: "Pixel 8" },
        "testbay:options": { idle_timeout_seconds: 30 },
        "appium:newCommandTimeout": 120,
      },
    });
    expect(payload.capabilities.alwaysMatch).toEqual({
      platformName: "Android",
      "appium:deviceName": "Pixel 8",
      "appium:udid": "emulator-5554",
      "appium:systemPort": 4724,
      "appium:mjpegServerPort": 4725,
      "appium:chromedriverPort": 4726,
      "appium:newCommandTimeout": 120,
    });
    expect(overridden.sort()).toEqual([
      "appium:chromedriverPort",
      "appium:systemPort",
      "appium:udid",
      "appium:wdaLocalPort",
    ]);
  });

  it("passes the installed version's file as appium:app", () => {
    const { payload, overridden } = buildSessionCapabilities({
      ...android,
      requested: { ...android.requested, "appium:app": "https://example.com/other.apk" },
      installedAppPath: "/var/cache/testbay-agent/ab12.apk",
    });
    expect(payload.capabilities.alwaysMatch["appium:app"]).toBe("/var/cache/testbay-agent/ab12.apk");
    expect(overridden).toContain("appium:app");
  });

  it("passes a public app URL on and returns it for the name lookup", () => {
    const { payload, appUrl } = buildSessionCapabilities({
      ...android,
      requested: { ...android.requested, "appium:app": "https://apps.example.com/shop.apk" },
    });
    expect(payload.capabilities.alwaysMatch["appium:app"]).toBe("https://apps.example.com/shop.apk");
    expect(appUrl?.hostname).toBe("apps.example.com");
  });

  it.each([
    ["http://127.0.0.1:8080/app.apk", "loopback"],
    ["http://localhost/app.apk", "agent's own host"],
    ["http://10.1.2.3/app.apk", "private"],
    ["http://169.254.169.254/latest/meta-data", "link-local"],
    ["http://[::1]/app.apk", "loopback"],
    ["http://0.0.0.0/app.apk", "unspecified"],
    ["http://2130706433/app.apk", "loopback"],
  ])("refuses the app URL %s (%s) unless private URLs are allowed", (url, kind) => {
    const input = { ...android, requested: { ...android.requested, "appium:app": url } };
    const error = refusal(input);
    expect(error.error).toBe("session not created");
    expect(error.message).toContain(kind);
    expect(error.message).toContain("--appium-allow-private-app-urls");
    const allowed = buildSessionCapabilities({ ...input, allowPrivateAppUrls: true });
    expect(allowed.payload.capabilities.alwaysMatch["appium:app"]).toBe(url);
  });

  it.each(["/Users/dev/app.apk", "file:///tmp/app.apk", "C:\\apps\\app.apk"])(
    "refuses the local path %s unless local apps are allowed",
    (path) => {
      const input = { ...android, requested: { ...android.requested, "appium:app": path } };
      const error = refusal(input);
      expect(error.error).toBe("session not created");
      expect(error.message).toContain("local path");
      expect(error.message).toContain("--appium-allow-local-apps");
      const allowed = buildSessionCapabilities({ ...input, allowLocalApps: true });
      expect(allowed.payload.capabilities.alwaysMatch["appium:app"]).toBe(path);
    },
  );

  it("refuses an appium:app that is not a string", () => {
    expect(refusal({ ...android, requested: { "appium:app": 42 } }).message).toContain("appium:app");
  });
});
