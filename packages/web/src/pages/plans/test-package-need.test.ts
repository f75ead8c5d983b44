import { describe, expect, it } from "vitest";
import { defaultVersion, neededTestPackage, unfitReason } from "./test-package-need.ts";

const apk = { format: "apk" } as const;
const xctest = { format: "xctest" } as const;
// Only what the functions read: a version's name and its test package's format.
const version = (name: string, testPackage: typeof apk | typeof xctest | null) =>
  ({ version: name, test_package: testPackage }) as unknown as Parameters<typeof unfitReason>[0] & {
    version: string;
  };

describe("which versions a plan can be triggered on", () => {
  it("knows which steps need which test package", () => {
    expect(neededTestPackage({ steps: [{ type: "inspect", expect: {} }] } as never)).toBeUndefined();
    expect(
      neededTestPackage({ steps: [{ type: "inspect", expect: {} }, { type: "instrumentation" }] } as never),
    ).toBe("apk");
    expect(neededTestPackage({ steps: [{ type: "xcuitest" }] } as never)).toBe("xctest");
  });

  it("says why a version does not fit", () => {
    expect(unfitReason(version("1", null), "apk")).toBe("no test package");
    expect(unfitReason(version("1", xctest), "apk")).toBe("its test package is an XCUITest bundle");
    expect(unfitReason(version("1", apk), "apk")).toBeUndefined();
    expect(unfitReason(version("1", null), undefined)).toBeUndefined();
  });

  it("starts on the newest version with the test package the plan needs, else the newest", () => {
    const versions = [version("1.3.0", null), version("1.2.3", apk), version("1.2.0", apk)];
    expect(defaultVersion(versions, "apk")?.version).toBe("1.2.3");
    expect(defaultVersion(versions, undefined)?.version).toBe("1.3.0");
    expect(defaultVersion(versions, "xctest")?.version).toBe("1.3.0");
    expect(defaultVersion([], "apk")).toBeUndefined();
  });
});
