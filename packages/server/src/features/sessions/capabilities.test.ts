import { describe, expect, it } from "vitest";
import { readNewSession } from "./capabilities.ts";
import { WebDriverError } from "./w3c-errors.ts";

/** The WebDriverError a body is refused with (fails the test when it is accepted). */
function refusal(body: unknown): WebDriverError {
  try {
    readNewSession(body);
  } catch (error) {
    if (error instanceof WebDriverError) return error;
    throw error;
  }
  throw new Error("the body was accepted");
}

const defaults = {
  platform: null,
  model: null,
  app: null,
  version: null,
  name: null,
  build: null,
  ci: null,
  idleTimeoutSeconds: 90,
  maxDurationSeconds: 1800,
  queueTimeoutSeconds: 300,
  recordVideo: true,
  selectors: {},
};

describe("a new session's capabilities, as real clients send them", () => {
  it("reads WebdriverIO 9's body: flat capabilities become alwaysMatch with firstMatch [{}]", () => {
    // webdriverio/webdriverio, packages/webdriver/src/utils.ts (startWebDriverSession): a config's flat
    // capabilities are sent as {capabilities: {alwaysMatch: caps, firstMatch: [{}]}}.
    const wdioCapabilities = {
      platformName: "Android",
      "appium:automationName": "UiAutomator2",
      "appium:deviceName": "Pixel 8",
      "appium:platformVersion": "14",
      "appium:app": "https://builds.example.com/shop-1.4.2.apk",
      "appium:newCommandTimeout": 240,
    };
    const testbayOptions = { name: "checkout flow", build: "nightly 812", idle_timeout_seconds: 120 };
    const session = readNewSession({
      capabilities: {
        alwaysMatch: { ...wdioCapabilities, "testbay:options": testbayOptions },
        firstMatch: [{}],
      },
    });
    expect(session).toEqual({
      device: { platform: "android", model: "Pixel 8", osVersionPrefix: "14", selectors: {} },
      app: { kind: "url", url: "https://builds.example.com/shop-1.4.2.apk" },
      options: { ...defaults, name: "checkout flow", build: "nightly 812", idleTimeoutSeconds: 120 },
      // Everything but testbay:options, unchanged.
      appiumCapabilities: wdioCapabilities,
      ignoredCapabilities: [],
    });
  });

  it("reads the Appium Java client's body: alwaysMatch with firstMatch [{}], an app already on the device", () => {
    // appium/java-client, src/main/java/io/appium/java_client/remote/AppiumProtocolHandshake.java (9.x): writes
    // firstMatch [{}] and the options (XCUITestOptions: platformName iOS, appium:automationName XCUITest) as
    // alwaysMatch.
    const xcuitest = {
      platformName: "iOS",
      "appium:automationName": "XCUITest",
      "appium:bundleId": "com.example.shop",
      "appium:platformVersion": "17.4",
    };
    const session = readNewSession({
      capabilities: { firstMatch: [{}], alwaysMatch: { ...xcuitest, "appium:wdaLocalPort": 8100 } },
    });
    expect(session.device).toEqual({ platform: "ios", model: null, osVersionPrefix: "17.4", selectors: {} });
    expect(session.app).toEqual({ kind: "none" });
    expect(session.appiumCapabilities).toEqual(xcuitest);
    expect(session.ignoredCapabilities).toEqual(["appium:wdaLocalPort"]);
  });

  it("accepts the empty firstMatch of the Java client's 8.x releases, as Appium does", () => {
    // The same file in 8.x wrote "firstMatch": [] (W3C asks for one or more entries; Appium's base driver,
    // packages/base-driver/lib/basedriver/capabilities.ts, reads [] as [{}]).
    const alwaysMatch = { platformName: "Android", "appium:appPackage": "com.example" };
    const session = readNewSession({ capabilities: { firstMatch: [], alwaysMatch } });
    expect(session.device.platform).toBe("android");
    expect(session.appiumCapabilities).toEqual(alwaysMatch);
  });

  it("reads the Appium Python client's body with a registered version in testbay:options", () => {
    // appium/python-client, appium/options/common/base.py (AppiumOptions.as_w3c): prefixes non-standard keys
    // with appium: and sends {capabilities: {firstMatch: [{}], alwaysMatch: caps}}.
    const session = readNewSession({
      capabilities: {
        firstMatch: [{}],
        alwaysMatch: {
          platformName: "Android",
          "appium:automationName": "UiAutomator2",
          "appium:udid": "emulator-5554",
          "appium:systemPort": 8200,
          "testbay:options": {
            app: "com.example.shop",
            version: "1.4.2",
            model: "sdk_gphone64_x86_64",
            record_video: false,
            queue_timeout_seconds: 0,
            ci: { provider: "github", branch: "main", build_url: "https://ci.example.com/run/1" },
          },
        },
      },
    });
    expect(session.app).toEqual({ kind: "version", packageName: "com.example.shop", version: "1.4.2" });
    expect(session.device).toEqual({
      platform: "android",
      model: "sdk_gphone64_x86_64",
      osVersionPrefix: null,
      selectors: {},
    });
    expect(session.options).toEqual({
      ...defaults,
      app: "com.example.shop",
      version: "1.4.2",
      model: "sdk_gphone64_x86_64",
      recordVideo: false,
      queueTimeoutSeconds: 0,
      ci: { provider: "github", branch: "main", build_url: "https://ci.example.com/run/1" },
    });
    // Testbay's options and the keys it owns (the reserved device's udid, the per-device ports) never reach Appium.
    expect(session.appiumCapabilities).toEqual({
      platformName: "Android",
      "appium:automationName": "UiAutomator2",
    });
    expect(session.ignoredCapabilities).toEqual(["appium:udid", "appium:systemPort"]);
  });

  it("reads the older Python client's body: everything in one firstMatch entry, desiredCapabilities beside it", () => {
    // appium/python-client 1.x, appium/webdriver/webdriver.py (_make_w3c_caps, _merge_capabilities):
    // {capabilities: {firstMatch: [caps]}, desiredCapabilities: caps}, with platform lowered into platformName.
    const session = readNewSession({
      capabilities: { firstMatch: [{ platformName: "android", "appium:deviceName": "Pixel 6" }] },
      desiredCapabilities: { platformName: "android", deviceName: "Pixel 6" },
    });
    expect(session.device).toEqual({
      platform: "android",
      model: "Pixel 6",
      osVersionPrefix: null,
      selectors: {},
    });
  });

  it("refuses a JSON Wire Protocol body (desiredCapabilities only), saying W3C capabilities are needed", () => {
    const error = refusal({ desiredCapabilities: { platformName: "Android" } });
    expect(error.error).toBe("invalid argument");
    expect(error.status).toBe(400);
    expect(error.message).toContain("W3C capabilities only");
  });

  it("refuses a body without capabilities", () => {
    for (const body of [undefined, null, [], "caps", { capabilities: [] }, { capabilities: "x" }]) {
      expect(refusal(body).error).toBe("invalid argument");
    }
  });
});

describe("W3C processing of alwaysMatch and firstMatch", () => {
  it("refuses a key given in both alwaysMatch and a firstMatch entry, naming it", () => {
    const error = refusal({
      capabilities: {
        alwaysMatch: { platformName: "Android", "appium:deviceName": "Pixel 8" },
        firstMatch: [{}, { "appium:deviceName": "Pixel 7" }],
      },
    });
    expect(error.error).toBe("invalid argument");
    expect(error.message).toBe(
      "appium:deviceName is in both capabilities.alwaysMatch and capabilities.firstMatch[1]; give it in one of them",
    );
  });

  it("leaves out null values: they are unset and do not conflict", () => {
    const session = readNewSession({
      capabilities: {
        alwaysMatch: { platformName: "Android", "appium:app": null },
        firstMatch: [{ "appium:app": "https://example.com/a.apk" }],
      },
    });
    expect(session.app).toEqual({ kind: "url", url: "https://example.com/a.apk" });
  });

  it("takes the first firstMatch entry Testbay can serve", () => {
    const session = readNewSession({
      capabilities: {
        alwaysMatch: { "appium:automationName": "UiAutomator2" },
        firstMatch: [{ platformName: "Windows" }, { platformName: "Android" }, { platformName: "iOS" }],
      },
    });
    expect(session.device.platform).toBe("android");
    expect(session.appiumCapabilities.platformName).toBe("Android");
  });

  it("says why the first entry fails when none can be served", () => {
    const error = refusal({
      capabilities: { firstMatch: [{ platformName: "Windows" }, { platformName: "Mac" }] },
    });
    expect(error.error).toBe("session not created");
    expect(error.message).toMatch(
      /^none of the 2 firstMatch entries can be served; the first: platformName "Windows"/,
    );
  });

  it("refuses malformed alwaysMatch and firstMatch", () => {
    expect(refusal({ capabilities: { alwaysMatch: [] } }).message).toContain(
      "capabilities.alwaysMatch must be",
    );
    expect(refusal({ capabilities: { firstMatch: {} } }).message).toContain(
      "capabilities.firstMatch must be",
    );
    expect(refusal({ capabilities: { firstMatch: [{ platformName: "Android" }, 3] } }).message).toContain(
      "capabilities.firstMatch[1] must be a JSON object",
    );
  });

  it("refuses non-standard keys without a vendor prefix, as Appium would, and suggests appium:", () => {
    const error = refusal({
      capabilities: { alwaysMatch: { platformName: "Android", deviceName: "Pixel 8" } },
    });
    expect(error.error).toBe("invalid argument");
    expect(error.message).toContain("deviceName is not a standard capability");
    expect(error.message).toContain("appium:deviceName");
  });
});

describe("the platform", () => {
  const platformOf = (alwaysMatch: Record<string, unknown>) =>
    readNewSession({ capabilities: { alwaysMatch } }).device.platform;

  it("reads platformName Android or iOS in any case", () => {
    expect(platformOf({ platformName: "ANDROID" })).toBe("android");
    expect(platformOf({ platformName: "ios" })).toBe("ios");
    expect(platformOf({ platformName: "IOS" })).toBe("ios");
  });

  it("reads testbay:options.platform for a driver with its own platformName, and passes that name on", () => {
    // Appium's fake driver (@appium/fake-driver) takes platformName "Fake".
    const fake = { platformName: "Fake", "appium:automationName": "Fake" };
    const session = readNewSession({
      capabilities: { alwaysMatch: { ...fake, "testbay:options": { platform: "Android" } } },
    });
    expect(session.device.platform).toBe("android");
    expect(session.appiumCapabilities).toEqual(fake);
  });

  it("answers session not created for a platform Testbay has no devices for", () => {
    const error = refusal({ capabilities: { alwaysMatch: { platformName: "Windows" } } });
    expect(error.error).toBe("session not created");
    expect(error.status).toBe(500);
    expect(error.message).toContain('platformName "Windows" is not a platform of Testbay\'s devices');
    expect(error.message).toContain("testbay:options.platform");

    const noPlatform = refusal({ capabilities: { alwaysMatch: { "appium:deviceName": "Pixel 8" } } });
    expect(noPlatform.error).toBe("session not created");
    expect(noPlatform.message).toContain("platformName is required");

    const badOption = refusal({
      capabilities: { alwaysMatch: { platformName: "Fake", "testbay:options": { platform: "Tizen" } } },
    });
    expect(badOption.error).toBe("session not created");
    expect(badOption.message).toContain('testbay:options.platform "Tizen"');
  });

  it("refuses a platformName and a testbay:options.platform that disagree, or a platformName not a string", () => {
    const error = refusal({
      capabilities: { alwaysMatch: { platformName: "iOS", "testbay:options": { platform: "android" } } },
    });
    expect(error.error).toBe("invalid argument");
    expect(error.message).toContain("name different platforms");
    expect(refusal({ capabilities: { alwaysMatch: { platformName: 7 } } }).message).toBe(
      "platformName must be a string; got 7",
    );
  });
});

describe("the device selectors", () => {
  it("prefers testbay:options.model to appium:deviceName", () => {
    const emulator = { platformName: "Android", "appium:deviceName": "Android Emulator" };
    const session = readNewSession({
      capabilities: { alwaysMatch: { ...emulator, "testbay:options": { model: "Pixel 8" } } },
    });
    expect(session.device.model).toBe("Pixel 8");
    // deviceName is Appium's too: it is passed on unchanged.
    expect(session.appiumCapabilities["appium:deviceName"]).toBe("Android Emulator");
  });

  it("refuses an appium:platformVersion that is not a string (Appium takes strings only)", () => {
    const error = refusal({
      capabilities: { alwaysMatch: { platformName: "Android", "appium:platformVersion": 14 } },
    });
    expect(error.error).toBe("invalid argument");
    expect(error.message).toBe("appium:platformVersion must be a non-empty string; got 14");
  });
});

describe("the app", () => {
  const appOf = (alwaysMatch: Record<string, unknown>) =>
    readNewSession({ capabilities: { alwaysMatch: { platformName: "Android", ...alwaysMatch } } }).app;

  it("flags a local appium:app path, which the agent refuses unless it allows local apps", () => {
    for (const path of ["/Users/dev/build/app-debug.apk", "C:\\builds\\app.apk", "file:///tmp/app.apk"]) {
      expect(appOf({ "appium:app": path })).toEqual({ kind: "local", path });
    }
  });

  it("passes an http or https appium:app on as a URL", () => {
    for (const url of ["http://10.0.0.5:8080/app.apk", "HTTPS://example.com/app.ipa"]) {
      expect(appOf({ "appium:app": url })).toEqual({ kind: "url", url });
    }
  });

  it("refuses an http appium:app that is no URL, or an appium:app that is no string", () => {
    expect(
      refusal({ capabilities: { alwaysMatch: { platformName: "Android", "appium:app": "https://" } } })
        .message,
    ).toBe('appium:app "https://" is not a valid URL');
    expect(
      refusal({ capabilities: { alwaysMatch: { platformName: "Android", "appium:app": 1 } } }).message,
    ).toBe("appium:app must be an http(s) URL or a path; got 1");
  });

  it("needs both testbay:options.app and version, and not appium:app beside them", () => {
    const withoutVersion = refusal({
      capabilities: {
        alwaysMatch: { platformName: "Android", "testbay:options": { app: "com.example.shop" } },
      },
    });
    expect(withoutVersion.error).toBe("invalid argument");
    expect(withoutVersion.message).toMatch(/^testbay:options\.version is missing/);

    const withoutApp = refusal({
      capabilities: { alwaysMatch: { platformName: "Android", "testbay:options": { version: "1.0" } } },
    });
    expect(withoutApp.message).toMatch(/^testbay:options\.app is missing/);

    const both = refusal({
      capabilities: {
        alwaysMatch: {
          platformName: "Android",
          "appium:app": "https://example.com/a.apk",
          "testbay:options": { app: "com.example.shop", version: "1.0" },
        },
      },
    });
    expect(both.message).toContain("not both");
  });
});

describe("testbay:options", () => {
  const optionsProblem = (options: unknown) =>
    refusal({ capabilities: { alwaysMatch: { platformName: "Android", "testbay:options": options } } });

  it("fills in the defaults", () => {
    expect(readNewSession({ capabilities: { alwaysMatch: { platformName: "iOS" } } }).options).toEqual(
      defaults,
    );
  });

  it("names the key, its rule and the value given when a value is wrong", () => {
    const cases: Array<[unknown, string]> = [
      [
        { idle_timeout_seconds: 0 },
        "testbay:options.idle_timeout_seconds must be a whole number of seconds from 1 to 3600 (default 90); got 0",
      ],
      [
        { idle_timeout_seconds: "90" },
        'testbay:options.idle_timeout_seconds must be a whole number of seconds from 1 to 3600 (default 90); got "90"',
      ],
      [
        { max_duration_seconds: 90000 },
        "testbay:options.max_duration_seconds must be a whole number of seconds from 30 to 86400 (default 1800); got 90000",
      ],
      [
        { queue_timeout_seconds: 1.5 },
        "testbay:options.queue_timeout_seconds must be a whole number of seconds from 0 to 3600 (default 300; 0: fail at once when no device is free); got 1.5",
      ],
      [
        { record_video: "yes" },
        'testbay:options.record_video must be true or false (default true); got "yes"',
      ],
      [{ name: "" }, 'testbay:options.name must be the session\'s name, 1 to 200 characters; got ""'],
      [
        { app: "../etc", version: "1.0" },
        'testbay:options.app must be a registered app\'s package name (Android) or bundle ID (iOS); got "../etc"',
      ],
    ];
    for (const [options, message] of cases) {
      const error = optionsProblem(options);
      expect(error.error).toBe("invalid argument");
      expect(error.message).toBe(message);
    }
  });

  it("says which field of ci breaks which rule", () => {
    const error = optionsProblem({ ci: { build_url: "ftp://ci.example.com/1" } });
    expect(error.message).toMatch(/^testbay:options\.ci must be an object with provider, branch/);
    expect(error.message).toContain('got {"build_url":"ftp://ci.example.com/1"}');
    expect(error.message).toContain("(ci.build_url must match pattern");
  });

  it("refuses an unknown option, listing the options", () => {
    const error = optionsProblem({ idleTimeout: 30 });
    expect(error.error).toBe("invalid argument");
    expect(error.message).toMatch(
      /^testbay:options\.idleTimeout is not a Testbay option; the options are platform, model/,
    );
  });

  it("refuses options that are not an object, and unknown testbay: capabilities", () => {
    expect(optionsProblem("fast").message).toMatch(
      /^testbay:options must be a JSON object of Testbay's options/,
    );
    const error = refusal({
      capabilities: { alwaysMatch: { platformName: "Android", "testbay:name": "x" } },
    });
    expect(error.message).toBe(
      "testbay:name is not a Testbay capability; Testbay's settings go in testbay:options",
    );
  });

  it("takes API.md §13's device selectors in testbay:options, as a plan's device entry has them", () => {
    const selectors = {
      api_level_min: 33,
      api_level_max: 35,
      models: ["Pixel 8", "Pixel 9"],
      abi: "arm64-v8a",
      emulator: false,
      labels: { team: "payments" },
    };
    const session = readNewSession({
      capabilities: { alwaysMatch: { platformName: "Android", "testbay:options": selectors } },
    });
    expect(session.device).toEqual({ platform: "android", model: null, osVersionPrefix: null, selectors });
    expect(session.options.selectors).toEqual(selectors);
  });

  it("refuses selectors no device can meet, with the plan's words and fix", () => {
    const swapped = refusal({
      capabilities: {
        alwaysMatch: { platformName: "Android", "testbay:options": { api_level_min: 35, api_level_max: 33 } },
      },
    });
    expect(swapped.error).toBe("invalid argument");
    expect(swapped.message).toBe(
      "testbay:options.api_level_min: 35 is above api_level_max 33: no device can match. Make api_level_min at most api_level_max (swapped: api_level_min 33, api_level_max 35).",
    );
    const both = refusal({
      capabilities: {
        alwaysMatch: {
          platformName: "Android",
          "appium:deviceName": "Pixel 8",
          "testbay:options": { models: ["Pixel 9"] },
        },
      },
    });
    expect(both.message).toMatch(/^testbay:options\.models: .*Give either model \(one model\) or models/);
    const wrongType = refusal({
      capabilities: {
        alwaysMatch: { platformName: "iOS", "testbay:options": { labels: ["team=payments"] } },
      },
    });
    expect(wrongType.message).toMatch(/^testbay:options\.labels must be an object of up to 16 labels/);
  });
});
