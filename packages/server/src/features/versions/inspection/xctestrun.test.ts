import { describe, expect, it } from "vitest";
import { binaryPlistOf } from "./make-test-plist.ts";
import { xctestrunFixture } from "./make-xctest-zip.ts";
import { type PlistValue, readPlistValue } from "./plist-value.ts";
import { readXctestrun } from "./xctestrun.ts";

const read = (bytes: Buffer) => readXctestrun(readPlistValue(bytes, "the .xctestrun"));
const dict = (entries: Record<string, PlistValue>) => new Map(Object.entries(entries));

describe("readXctestrun on recorded files", () => {
  it("reads FormatVersion 2: each TestConfigurations[].TestTargets[] by its BlueprintName", () => {
    const { formatVersion, targets } = read(xctestrunFixture("v2-unit-and-ui.xctestrun"));
    expect(formatVersion).toBe(2);
    expect(targets).toEqual([
      {
        name: "FakeCounterAppTests",
        testHostPath: "__TESTROOT__/Debug-iphoneos/FakeCounterApp.app",
        testHostBundleIdentifier: "saucelabs.FakeCounterApp",
        testBundlePath: "__TESTHOST__/PlugIns/FakeCounterAppTests.xctest",
        uiTargetAppPath: null,
        uiTargetAppBundleIdentifier: null,
      },
      {
        name: "FakeCounterAppUITests",
        testHostPath: "__TESTROOT__/Debug-iphoneos/FakeCounterAppUITests-Runner.app",
        testHostBundleIdentifier: "saucelabs.FakeCounterAppUITests.xctrunner",
        testBundlePath: "__TESTHOST__/PlugIns/FakeCounterAppUITests.xctest",
        uiTargetAppPath: "__TESTROOT__/Debug-iphoneos/FakeCounterApp.app",
        uiTargetAppBundleIdentifier: null,
      },
    ]);
  });

  it("reads FormatVersion 1: every top-level key but __xctestrun_metadata__ is a target", () => {
    const { formatVersion, targets } = read(xctestrunFixture("v1-two-ui-targets.xctestrun"));
    expect(formatVersion).toBe(1);
    expect(
      targets.map((target) => [target.name, target.testHostBundleIdentifier, target.uiTargetAppPath]),
    ).toEqual([
      [
        "another-targetUITests",
        "com.apple.test.another-targetUITests-Runner",
        "__TESTROOT__/Debug-iphonesimulator/another-target.app",
      ],
      [
        "sample-appUITests",
        "com.apple.test.sample-appUITests-Runner",
        "__TESTROOT__/Debug-iphonesimulator/sample-app.app",
      ],
    ]);
  });

  it("reads the man page's example, whose target has no host bundle ID", () => {
    expect(read(xctestrunFixture("man-v2.xctestrun")).targets).toEqual([
      {
        name: "MyAppTests",
        testHostPath: "__TESTROOT__/Debug-iphonesimulator/MyApp.app",
        testHostBundleIdentifier: null,
        testBundlePath: "__TESTHOST__/PlugIns/MyAppTests.xctest",
        uiTargetAppPath: "__TESTROOT__/Debug-iphonesimulator/MyApp.app",
        uiTargetAppBundleIdentifier: null,
      },
    ]);
  });

  it("reads the same from the binary form of each file (plutil -convert binary1)", () => {
    for (const name of ["v2-unit-and-ui.xctestrun", "v1-two-ui-targets.xctestrun", "man-v2.xctestrun"]) {
      const xml = readPlistValue(xctestrunFixture(name), "the .xctestrun");
      const binary = binaryPlistOf(xml);
      expect(binary.subarray(0, 8).toString("latin1")).toBe("bplist00");
      expect(readPlistValue(binary, "the .xctestrun"), name).toEqual(xml);
      expect(readXctestrun(readPlistValue(binary, "the .xctestrun")), name).toEqual(readXctestrun(xml));
    }
  });
});

describe("readXctestrun on what is not an .xctestrun", () => {
  it("reads an unversioned file (before Xcode 9) as version 1", () => {
    const plist = dict({ AppTests: dict({ TestHostPath: "__TESTROOT__/App.app" }) });
    expect(readXctestrun(plist)).toMatchObject({ formatVersion: 1, targets: [{ name: "AppTests" }] });
  });

  it("says why, for each way the file can be wrong", () => {
    const v2 = (configurations: PlistValue) =>
      dict({ __xctestrun_metadata__: dict({ FormatVersion: 2 }), TestConfigurations: configurations });
    const cases: Array<[PlistValue, RegExp]> = [
      [["AppTests"], /not a dictionary at its top level/],
      [
        dict({ __xctestrun_metadata__: dict({ FormatVersion: 3 }) }),
        /has FormatVersion "3"; we read versions 1 and 2/,
      ],
      [dict({ __xctestrun_metadata__: dict({ FormatVersion: 1 }) }), /names no test targets/],
      [dict({ __xctestrun_metadata__: dict({ FormatVersion: 2 }) }), /no TestConfigurations array/],
      [v2([dict({ Name: "x" })]), /no TestTargets array in TestConfigurations\[0\]/],
      [
        v2([dict({ TestTargets: ["x"] })]),
        /TestConfigurations\[0\]\.TestTargets\[0\], which is not a dictionary/,
      ],
      [
        v2([dict({ TestTargets: [dict({ TestHostPath: "x" })] })]),
        /no BlueprintName in TestConfigurations\[0\]/,
      ],
      [v2([dict({ TestTargets: [dict({ BlueprintName: "A/B" })] })]), /which is not a test target name/],
      [v2([dict({ TestTargets: [dict({ BlueprintName: "A\u0000" })] })]), /which is not a test target name/],
      [v2([dict({ TestTargets: [] })]), /names no test targets/],
      [
        v2([dict({ TestTargets: Array.from({ length: 501 }, (_, i) => dict({ BlueprintName: `T${i}` })) })]),
        /names 501 test targets, more than the 500 we read/,
      ],
    ];
    for (const [plist, message] of cases)
      expect(() => readXctestrun(plist), String(message)).toThrow(message);
  });
});
