import { describe, expect, it } from "vitest";
import { waitFor } from "./agent-process.ts";
import { IOS_APP as APP, iosServer, iPhone15 as sim } from "./ios-server.ts";
import { buildAppArchive, buildTestPackageZip, type XcSuite } from "./stand-ins/apple-lab.ts";

// The app an XCUITest run tests is the version's own (API.md §4b), end to end: a real server, a real
// `testbay-agent --devices auto`, and the stand-in xcodebuild, which installs the apps the .xctestrun names
// (UITargetAppPath, the test host) over what the agent installed, as the real one does, and records what was
// installed when each target's tests ran (lab.testSessions).

const UDID = "6F1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B11";
const SUITES: Record<string, XcSuite> = {
  ShopUITests: { tests: [{ class: "LoginTests", method: "testSignsIn", outcome: "pass" }] },
  ShopTests: { tests: [{ class: "ModelTests", method: "testTotals", outcome: "pass" }] },
};

// Version 1.0.0: the IPA is build 240, its test package was built against build 239 and holds that copy.
const ios = iosServer((scratch) => ({
  app: buildAppArchive(scratch, { bundleId: APP, name: "Shop", build: "240" }, "ipa"),
  testPackage: buildTestPackageZip(scratch, {
    app: { bundleId: APP, name: "Shop", build: "239" },
    targets: [
      { name: "ShopUITests", ui: true },
      { name: "ShopTests", ui: false },
    ],
  }),
}));
const trigger = (version: string) =>
  ios.trigger({ type: "xcuitest" }, { device: { platform: "ios", model: "iPhone 15" }, version });

describe("the app an xcuitest run tests", () => {
  it("is the version's IPA (build 240), not the older build (239) the test package holds", async () => {
    const lab = await ios.createLab({ simulators: [sim(UDID)], suites: SUITES });
    const id = await trigger("1.0.0");
    const agent = ios.startAgent("mac-tested-1");
    expect(await ios.finished(id, agent)).toMatchObject({
      status: "passed",
      summary: { tests: 2, passed: 2 },
    });
    const runs = lab.testSessions(UDID);
    expect(runs.length).toBeGreaterThan(0);
    for (const run of runs) {
      // The UI tests drove the app installed then, and the unit tests ran hosted in it: build 240 both times.
      expect(run.targets.map((t) => `${t.name} ${t.app?.bundleId} ${t.app?.build}`)).toEqual([
        `ShopUITests ${APP} 240`,
        `ShopTests ${APP} 240`,
      ]);
    }
    // Nothing of the run stays on a simulator the agent does not manage (API.md §13).
    await waitFor("the app uninstalled after the run", async () => !lab.installed(UDID)[APP]);
  });

  it("is the version's IPA when the test package was zipped without the app: accepted, and run", async () => {
    const stored = await ios.uploadVersion("1.0.1", (scratch) => ({
      app: buildAppArchive(`${scratch}/1.0.1`, { bundleId: APP, name: "Shop", build: "241" }, "ipa"),
      testPackage: buildTestPackageZip(`${scratch}/1.0.1`, {
        app: { bundleId: APP, name: "Shop" },
        omitApp: true,
        targets: [{ name: "ShopUITests", ui: true }],
      }),
    }));
    expect(stored?.test.test_targets).toEqual([
      { name: "ShopUITests", bundle_id: `${APP}.ShopUITests.xctrunner`, ui_target_app: null },
    ]);
    const lab = await ios.createLab({ simulators: [sim(UDID)], suites: SUITES });
    const id = await trigger("1.0.1");
    const agent = ios.startAgent("mac-tested-2");
    expect(await ios.finished(id, agent)).toMatchObject({
      status: "passed",
      summary: { tests: 1, passed: 1 },
    });
    const runs = lab.testSessions(UDID);
    expect(runs.length).toBeGreaterThan(0);
    for (const run of runs) {
      expect(run.targets).toEqual([
        { name: "ShopUITests", app: expect.objectContaining({ bundleId: APP, build: "241" }) },
      ]);
    }
  });
});
