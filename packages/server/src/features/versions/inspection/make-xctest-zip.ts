/**
 * Test helper: XCUITest test packages as `cd Build/Products && zip -r` makes them from a recorded .xctestrun.
 * The bundles its targets name are laid out around it (each with an Info.plist holding its bundle ID and the
 * test bundles in the hosts' PlugIns), so a test states only which bundle IDs the apps have and what to leave
 * out or add.
 */
import { readFileSync } from "node:fs";
import { xmlInfoPlist } from "./make-test-plist.ts";
import { makeTestZip, type TestZipEntry } from "./make-test-zip.ts";

/** A recorded .xctestrun (fixtures/xctestrun/SOURCES.md). */
export const xctestrunFixture = (name: string) =>
  readFileSync(new URL(`./fixtures/xctestrun/${name}`, import.meta.url));

export interface XctestZipOptions {
  /** The .xctestrun's path in the zip (default: at the top, named as Xcode names it). */
  xctestrunPath?: string;
  /** Bundles (paths relative to the .xctestrun's folder) and their CFBundleIdentifier. */
  bundles: Record<string, string>;
  /** Test bundles: folders with a binary and no bundle ID read (relative to the .xctestrun's folder). */
  testBundles?: string[];
  /** More entries, as given. */
  extra?: TestZipEntry[];
}

export function makeXctestZip(xctestrun: Buffer, options: XctestZipOptions): Buffer {
  const path = options.xctestrunPath ?? "FakeCounterAppTest_FakeAppTestPlan_iphoneos18.2-arm64.xctestrun";
  const root = path.includes("/") ? path.slice(0, path.lastIndexOf("/") + 1) : "";
  const entries: TestZipEntry[] = [{ name: path, data: xctestrun, deflate: true }];
  for (const [bundle, id] of Object.entries(options.bundles)) {
    entries.push({ name: `${root}${bundle}/Info.plist`, data: xmlInfoPlist({ CFBundleIdentifier: id }) });
    entries.push({
      name: `${root}${bundle}/${bundle
        .split("/")
        .pop()
        ?.replace(/\.app$/, "")}`,
      data: Buffer.alloc(16),
    });
  }
  for (const bundle of options.testBundles ?? []) {
    const name =
      bundle
        .split("/")
        .pop()
        ?.replace(/\.xctest$/, "") ?? "Tests";
    entries.push({ name: `${root}${bundle}/${name}`, data: Buffer.alloc(16) });
  }
  return makeTestZip([...entries, ...(options.extra ?? [])]);
}

/** The products v2-unit-and-ui.xctestrun names, the app having bundle ID `app`. */
export function fakeCounterProducts(
  app = "saucelabs.FakeCounterApp",
): Omit<XctestZipOptions, "xctestrunPath"> {
  return {
    bundles: {
      "Debug-iphoneos/FakeCounterApp.app": app,
      "Debug-iphoneos/FakeCounterAppUITests-Runner.app": "saucelabs.FakeCounterAppUITests.xctrunner",
    },
    testBundles: [
      "Debug-iphoneos/FakeCounterApp.app/PlugIns/FakeCounterAppTests.xctest",
      "Debug-iphoneos/FakeCounterAppUITests-Runner.app/PlugIns/FakeCounterAppUITests.xctest",
    ],
  };
}
