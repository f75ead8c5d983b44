import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inspectTestPackage, XctestPackageError } from "./inspect-test-package.ts";
import { readInstrumentation } from "./instrumentation-manifest.ts";
import { makeTestZip } from "./make-test-zip.ts";
import { ANDROID_NS, type ManifestElement } from "./manifest-element.ts";
import { UnsupportedBinaryError } from "./unsupported-binary-error.ts";

const fixtures = fileURLToPath(new URL("../../../../test/fixtures/binaries/", import.meta.url));
const fixture = (name: string) => join(fixtures, name);

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "testbay-test-package-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/**
 * The values `aapt dump xmltree` printed for the fixture (recorded by make-fixtures.sh): the reference our
 * own reading must agree with. Strings appear as `A: android:name(0x…)="…"`, integers as `=(type 0x10)0x18`.
 */
function fromDump(dump: string) {
  const lines = dump.split("\n");
  const element = (name: string) => lines.findIndex((line) => line.trim().startsWith(`E: ${name} `));
  const attribute = (at: number, name: string) => {
    for (const line of lines.slice(at + 1)) {
      if (line.trim().startsWith("E: ")) break;
      const match = new RegExp(
        `A: ${name}(?:\\(0x[0-9a-f]+\\))?=(?:"([^"]*)"|\\(type 0x10\\)(0x[0-9a-f]+))`,
      ).exec(line);
      if (match) return match[1] ?? Number.parseInt(match[2] ?? "", 16);
    }
    return undefined;
  };
  return {
    package_name: attribute(element("manifest"), "package"),
    runner: attribute(element("instrumentation"), "android:name"),
    target_package: attribute(element("instrumentation"), "android:targetPackage"),
    min_sdk: attribute(element("uses-sdk"), "android:minSdkVersion"),
    target_sdk: attribute(element("uses-sdk"), "android:targetSdkVersion"),
  };
}

describe("inspectTestPackage", () => {
  it("reads the aapt-built instrumentation APK exactly as `aapt dump xmltree` shows it", async () => {
    const expected = fromDump(await readFile(fixture("app-basic-androidTest.xmltree.txt"), "utf8"));
    expect(expected).toEqual({
      package_name: "com.example.basic.test",
      runner: "androidx.test.runner.AndroidJUnitRunner",
      target_package: "com.example.basic",
      min_sdk: 24,
      target_sdk: 34,
    });
    expect(await inspectTestPackage(fixture("app-basic-androidTest.apk"))).toEqual({
      format: "apk",
      test: expected,
    });
  });

  it("reads the target of an APK that instruments another app", async () => {
    expect(await inspectTestPackage(fixture("app-other-androidTest.apk"))).toMatchObject({
      format: "apk",
      test: {
        package_name: "com.example.other.test",
        target_package: "com.example.other",
        min_sdk: 21,
        target_sdk: 33,
      },
    });
  });

  it("refuses an app APK: it has no <instrumentation>", async () => {
    await expect(inspectTestPackage(fixture("app-basic.apk"))).rejects.toThrow(/no <instrumentation>/);
  });

  it("refuses an IPA and a zip that is no APK", async () => {
    await expect(inspectTestPackage(fixture("ios-xml-plist.ipa"))).rejects.toThrow(UnsupportedBinaryError);
    await expect(inspectTestPackage(fixture("plain.zip"))).rejects.toThrow(UnsupportedBinaryError);
    await expect(inspectTestPackage(fixture("not-a-binary.bin"))).rejects.toThrow(UnsupportedBinaryError);
  });

  it("reads a zip with an .xctestrun as an XCUITest bundle, whatever else it holds", async () => {
    const file = join(scratch, "tests.zip");
    await writeFile(
      file,
      makeTestZip([
        { name: "Build/Products/App_iphoneos17.0-arm64.xctestrun", data: Buffer.from("<plist/>") },
        { name: "App_iphoneos17.0-arm64.xctestrun", data: Buffer.from("<plist/>") },
      ]),
    );
    // The one at the top is read (the deeper one is not a candidate) and is an empty plist: refused as an
    // XCUITest bundle that cannot be read, not as "not an APK".
    await expect(inspectTestPackage(file)).rejects.toThrow(XctestPackageError);
  });
});

describe("readInstrumentation", () => {
  const attr = (name: string, value: string, namespace = ANDROID_NS) => ({
    namespace,
    name,
    value: { kind: "string" as const, value },
  });
  const manifest = (instrumentation: ManifestElement["attributes"]): ManifestElement => ({
    name: "manifest",
    attributes: [attr("package", "com.example.app.test", "")],
    children: [{ name: "instrumentation", attributes: instrumentation, children: [] }],
  });

  it("makes a runner name starting with '.' absolute against the test APK's package, as Android does", () => {
    const info = readInstrumentation(
      manifest([attr("name", ".CustomRunner"), attr("targetPackage", "com.example.app")]),
    );
    expect(info.runner).toBe("com.example.app.test.CustomRunner");
  });

  it("refuses an <instrumentation> without a target", () => {
    expect(() =>
      readInstrumentation(manifest([attr("name", "androidx.test.runner.AndroidJUnitRunner")])),
    ).toThrow(/targetPackage/);
  });
});
