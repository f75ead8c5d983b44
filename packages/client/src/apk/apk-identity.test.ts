import { describe, expect, it } from "vitest";
import { readApkIdentity, versionOf } from "./apk-identity.ts";

/** The server's inspection fixtures: real APKs built by packages/server/test/fixtures/binaries/make-fixtures.sh. */
const fixture = (name: string) =>
  new URL(`../../../server/test/fixtures/binaries/${name}`, import.meta.url).pathname;

describe("reading an APK's package and version on the CI machine", () => {
  it("reads package, versionName and versionCode as aapt wrote them", async () => {
    const identity = await readApkIdentity(fixture("app-debuggable-abis.apk"));
    expect(identity).toEqual({
      packageName: "com.example.abis",
      versionName: "2.0.0-beta+7",
      versionCode: 7,
    });
    expect(versionOf(identity)).toBe("2.0.0-beta+7+7");
    expect(versionOf(await readApkIdentity(fixture("app-basic.apk")))).toBe("1.2.3+42");
  });

  it("reads a test APK's package, which has no version", async () => {
    expect(await readApkIdentity(fixture("app-basic-androidTest.apk"))).toEqual({
      packageName: "com.example.basic.test",
      versionName: undefined,
      versionCode: undefined,
    });
  });

  it("says what is wrong with a file that is not an APK", async () => {
    await expect(readApkIdentity(fixture("plain.zip"))).rejects.toThrow(
      /has no AndroidManifest\.xml: is it an APK\?/,
    );
    await expect(readApkIdentity(fixture("not-a-binary.bin"))).rejects.toThrow(/not a zip file/);
  });
});
