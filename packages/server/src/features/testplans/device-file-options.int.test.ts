// The instrumentation step's device-file options and the device entry's locale and orientation (API.md §14): kept
// as given, and each mistake refused with 400 invalid_request at its path, with a fix that says what to write.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";

let server: TestServer;
let ci: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  for (const [package_name, platform] of [
    ["com.acme.shop", "android"],
    ["com.acme.ios", "ios"],
  ]) {
    expect(
      (await call(`${server.baseUrl}/apps`, { headers: ci, json: { package_name, platform } })).status,
    ).toBe(201);
  }
});
afterAll(() => server.close());

const createPlan = (step: Record<string, unknown>, devices: unknown[] = [{ platform: "android" }]) =>
  call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: "flank",
      package_name: "com.acme.shop",
      devices,
      steps: [{ type: "instrumentation", ...step }],
    },
  });

describe("device-file options of an instrumentation step", () => {
  it("keeps every option and the entry's locale and orientation as given", async () => {
    const step = {
      environment: { clearPackageData: "true", "my.key_1": "a value" },
      use_orchestrator: true,
      additional_apks: ["services.apk"],
      push: [{ file: "users.json", to: "/sdcard/users.json" }],
      pull: ["/sdcard/screenshots"],
      pull_filter: ["^/sdcard/screenshots/.*\\.png$"],
      coverage: true,
      always_run: ["com.acme.Setup", "com.acme.Login#signIn"],
      filter: { not_classes: ["com.acme.Slow#big"], not_packages: ["com.acme.flaky"] },
    };
    const devices = [
      { platform: "android", locale: "de_DE", orientation: "portrait" },
      { platform: "android", locale: "fr" },
    ];
    const created = await createPlan(step, devices);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.steps[0]).toEqual({ type: "instrumentation", ...step });
    expect(created.body.devices).toEqual(devices);
  });

  it("refuses environment keys Testbay sets itself, naming the plan field to use instead", async () => {
    const cases: Array<[string, string]> = [
      ["class", "filter.classes"],
      ["notPackage", "filter.not_packages"],
      ["coverageFilePath", "coverage: true"],
      ["targetInstrumentation", "runner"],
      ["testFile", "filter.classes"],
    ];
    for (const [key, instead] of cases) {
      const refused = await createPlan({ environment: { [key]: "x" } });
      expect(refused.status, key).toBe(400);
      expect(refused.body.code).toBe("invalid_request");
      expect(refused.body.errors[0].path).toBe(`/steps/0/environment/${key}`);
      expect(refused.body.fix, key).toContain(instead);
    }
  });

  it("refuses a pull_filter that is no regular expression, naming the pattern", async () => {
    const refused = await createPlan({ pull: ["/sdcard/out"], pull_filter: ["ok\\.png$", "([unclosed"] });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].path).toBe("/steps/0/pull_filter/1");
    expect(refused.body.detail).toContain('"([unclosed"');
    expect(refused.body.fix).toContain('"([unclosed"');
  });

  it("refuses relative device paths, bad file names, too many entries and odd locales at their paths", async () => {
    const cases: Array<[Record<string, unknown>, string, unknown[]?]> = [
      [{ push: [{ file: "users.json", to: "sdcard/users.json" }] }, "/steps/0/push/0/to"],
      [{ pull: ["relative/dir"] }, "/steps/0/pull/0"],
      [{ additional_apks: ["../evil.apk"] }, "/steps/0/additional_apks/0"],
      [{ additional_apks: Array.from({ length: 11 }, (_, i) => `a${i}.apk`) }, "/steps/0/additional_apks"],
      [{ pull: Array.from({ length: 21 }, (_, i) => `/sdcard/d${i}`) }, "/steps/0/pull"],
      [{ environment: { "1bad": "x" } }, "/steps/0/environment"],
      [{ args: { "bad key": "x" } }, "/steps/0/args"],
      [{ always_run: ["com.acme.Login#sign in"] }, "/steps/0/always_run/0"],
      [{ use_orchestrator: "yes" }, "/steps/0/use_orchestrator"],
      [{}, "/devices/0/locale", [{ platform: "android", locale: "english" }]],
      [{}, "/devices/0/orientation", [{ platform: "android", orientation: "upside-down" }]],
    ];
    for (const [step, path, devices] of cases) {
      const refused = await createPlan(step, devices);
      expect(refused.status, JSON.stringify(step)).toBe(400);
      expect(
        refused.body.errors.map((e: { path: string }) => e.path),
        JSON.stringify(step),
      ).toContain(path);
    }
  });

  it("refuses locale and orientation on an iOS entry: Android only for now", async () => {
    const refused = await call(`${server.baseUrl}/testplans`, {
      headers: ci,
      json: {
        name: "ios",
        package_name: "com.acme.ios",
        devices: [{ platform: "ios", locale: "fr_FR", orientation: "landscape" }],
        steps: [{ type: "xcuitest" }],
      },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors.map((e: { path: string }) => e.path)).toEqual([
      "/devices/0/locale",
      "/devices/0/orientation",
    ]);
    expect(refused.body.fix).toContain("Android");
  });
});
