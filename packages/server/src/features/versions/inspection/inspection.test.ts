import { randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BinaryMetadata, inspectBinary, UnsupportedBinaryError } from "./index.ts";
import { MAX_MANIFEST_BYTES } from "./limits.ts";
import { makeTestZip, type TestZipEntry } from "./make-test-zip.ts";
import { withZipArchive } from "./zip-archive.ts";

const fixtures = fileURLToPath(new URL("../../../../test/fixtures/binaries/", import.meta.url));
const fixture = (name: string) => join(fixtures, name);

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "testbay-inspection-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

async function tempFile(name: string, bytes: Buffer): Promise<string> {
  const path = join(scratch, name);
  await writeFile(path, bytes);
  return path;
}

async function inspectZip(name: string, entries: TestZipEntry[]): Promise<BinaryMetadata> {
  return inspectBinary(await tempFile(name, makeTestZip(entries)));
}

/** One entry of a fixture, as the tests' raw material for broken variants. */
async function fixtureEntry(file: string, entryName: string): Promise<Buffer> {
  return withZipArchive(fixture(file), async (zip) => {
    for await (const entry of zip.entries()) if (entry.name === entryName) return zip.read(entry, 1 << 20);
    throw new Error(`${file} has no ${entryName}`);
  });
}

const companion: TestZipEntry = { name: "classes.dex", data: Buffer.from("dex\n035\0") };

const ios: Omit<BinaryMetadata, "format"> = {
  platform: "ios",
  package_name: "com.example.iosapp",
  version_name: "3.1.0",
  version_code: "310",
  min_sdk: null,
  target_sdk: null,
  min_os_version: "15.0",
  abis: [],
  permissions: [],
  debuggable: false,
  display_name: "iOS App",
};

/** The README table of test/fixtures/binaries, row by row. */
const expected: Record<string, BinaryMetadata> = {
  "app-basic.apk": {
    format: "apk",
    platform: "android",
    package_name: "com.example.basic",
    version_name: "1.2.3",
    version_code: 42,
    min_sdk: 24,
    target_sdk: 34,
    min_os_version: null,
    abis: [],
    permissions: ["android.permission.CAMERA", "android.permission.INTERNET"],
    debuggable: false,
    // The label is @string/app_name: a resource reference, which we do not resolve.
    display_name: null,
  },
  "app-debuggable-abis.apk": {
    format: "apk",
    platform: "android",
    package_name: "com.example.abis",
    version_name: "2.0.0-beta+7",
    version_code: 7,
    min_sdk: 21,
    target_sdk: 33,
    min_os_version: null,
    abis: ["arm64-v8a", "x86_64"],
    permissions: [],
    debuggable: true,
    display_name: "Abis App",
  },
  "app-other-package.apk": {
    format: "apk",
    platform: "android",
    package_name: "com.example.other",
    version_name: "1.0.0",
    version_code: 1,
    min_sdk: 24,
    target_sdk: 34,
    min_os_version: null,
    abis: [],
    permissions: [],
    debuggable: false,
    display_name: "Other App",
  },
  "app-bundle.aab": {
    format: "aab",
    platform: "android",
    package_name: "com.example.bundle",
    version_name: "4.5.6",
    version_code: 456,
    min_sdk: 26,
    target_sdk: 34,
    min_os_version: null,
    abis: ["arm64-v8a"],
    permissions: ["android.permission.INTERNET"],
    debuggable: false,
    display_name: "Bundle App",
  },
  "ios-xml-plist.ipa": { format: "ipa", ...ios },
  "ios-binary-plist.ipa": { format: "ipa", ...ios },
  "ios-app.zip": { format: "app", ...ios },
};

describe("inspectBinary on the committed fixtures", () => {
  it.each(Object.entries(expected))(
    "reads %s exactly as the fixtures README says",
    async (file, metadata) => {
      expect(await inspectBinary(fixture(file))).toEqual(metadata);
    },
  );

  it("reports the package an APK really declares (app-other-package.apk)", async () => {
    const metadata = await inspectBinary(fixture("app-other-package.apk"));
    expect(metadata.package_name).toBe("com.example.other");
  });

  it("decides the format from the content, not the file name", async () => {
    const renamed = await tempFile("looks-like.ipa", await readFile(fixture("app-basic.apk")));
    expect(await inspectBinary(renamed)).toMatchObject({ format: "apk", package_name: "com.example.basic" });
  });
});

describe("inspectBinary refuses what is not an app binary", () => {
  it("refuses a file that is not a zip (not-a-binary.bin)", async () => {
    const error = await inspectBinary(fixture("not-a-binary.bin")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsupportedBinaryError);
    expect((error as Error).message).toMatch(/^it is not a zip archive \(/);
  });

  it("refuses a zip with no manifest and no Info.plist (plain.zip)", async () => {
    await expect(inspectBinary(fixture("plain.zip"))).rejects.toThrow(
      new UnsupportedBinaryError(
        "it is a zip archive, but it holds no AndroidManifest.xml, base/manifest/AndroidManifest.xml, " +
          "Payload/*.app/Info.plist or *.app/Info.plist",
      ),
    );
  });

  it("refuses a zip whose only Android file is a bare AndroidManifest.xml", async () => {
    const manifest = await fixtureEntry("app-basic.apk", "AndroidManifest.xml");
    await expect(inspectZip("bare.apk", [{ name: "AndroidManifest.xml", data: manifest }])).rejects.toThrow(
      /holds an AndroidManifest.xml but no classes.dex, resources.arsc or META-INF/,
    );
  });

  it("refuses a truncated APK (its first half)", async () => {
    const apk = await readFile(fixture("app-basic.apk"));
    const truncated = await tempFile("truncated.apk", apk.subarray(0, apk.length >> 1));
    await expect(inspectBinary(truncated)).rejects.toThrow(UnsupportedBinaryError);
  });

  it("refuses a zip bomb whose manifest declares more than the cap", async () => {
    const zeros = Buffer.alloc(50 * 1024 * 1024);
    const bomb = [{ name: "AndroidManifest.xml", data: zeros, deflate: true }, companion];
    await expect(inspectZip("bomb.apk", bomb)).rejects.toThrow(
      new UnsupportedBinaryError(
        `AndroidManifest.xml declares ${zeros.length} bytes uncompressed, more than the ${MAX_MANIFEST_BYTES} we read`,
      ),
    );
  });

  it("refuses a zip bomb whose manifest lies about its size and inflates past it", async () => {
    const zeros = Buffer.alloc(50 * 1024 * 1024);
    const bomb = [{ name: "AndroidManifest.xml", data: zeros, deflate: true, declaredSize: 1024 }, companion];
    await expect(inspectZip("lying-bomb.apk", bomb)).rejects.toThrow(
      /^AndroidManifest.xml is corrupt in the zip \(too many bytes/,
    );
  });

  it("refuses random bytes in place of the APK manifest", async () => {
    const manifest = { name: "AndroidManifest.xml", data: randomBytes(4096) };
    await expect(inspectZip("random.apk", [manifest, companion])).rejects.toThrow(UnsupportedBinaryError);
  });

  it("refuses a truncated binary manifest", async () => {
    const manifest = await fixtureEntry("app-basic.apk", "AndroidManifest.xml");
    const cut = { name: "AndroidManifest.xml", data: manifest.subarray(0, manifest.length >> 1) };
    await expect(inspectZip("cut.apk", [cut, companion])).rejects.toThrow(/is truncated/);
  });

  it("refuses random bytes in place of the AAB manifest", async () => {
    const manifest = { name: "base/manifest/AndroidManifest.xml", data: randomBytes(4096) };
    await expect(inspectZip("random.aab", [manifest])).rejects.toThrow(UnsupportedBinaryError);
  });

  it("refuses random bytes and truncated plists in place of Info.plist", async () => {
    const binaryPlist = await fixtureEntry("ios-binary-plist.ipa", "Payload/IosApp.app/Info.plist");
    const xmlPlist = await fixtureEntry("ios-xml-plist.ipa", "Payload/IosApp.app/Info.plist");
    for (const data of [randomBytes(4096), binaryPlist.subarray(0, 60), xmlPlist.subarray(0, 300)]) {
      const plist = { name: "Payload/IosApp.app/Info.plist", data };
      const error = await inspectZip("broken.ipa", [plist]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnsupportedBinaryError);
      // The message becomes an API error detail: none of the upload's raw bytes may leak into it.
      expect((error as Error).message).toMatch(/^its Info.plist is not a valid [\x20-\x7e…]+$/);
    }
  });

  it("reports a missing file as a plain error, not as an unsupported binary", async () => {
    const error = await inspectBinary(join(scratch, "does-not-exist.apk")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(UnsupportedBinaryError);
    expect(error).toMatchObject({ code: "ENOENT" });
  });

  // Linux shows a process's open files in /proc; elsewhere there is nothing cheap to count.
  it.runIf(existsSync("/proc/self/fd"))("closes the file after success and after refusing", async () => {
    const openFiles = () => readdirSync("/proc/self/fd").length;
    const random = await tempFile(
      "fd-random.apk",
      makeTestZip([{ ...companion }, { name: "AndroidManifest.xml", data: randomBytes(64) }]),
    );
    const before = openFiles();
    for (let i = 0; i < 20; i++) {
      await inspectBinary(fixture("app-debuggable-abis.apk"));
      await inspectBinary(fixture("plain.zip")).catch(() => {});
      await inspectBinary(random).catch(() => {});
    }
    expect(openFiles()).toBe(before);
  });
});
