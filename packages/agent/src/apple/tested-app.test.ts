// Pointing the test package's .xctestrun at the version's app (API.md §4b): recorded files of both format
// versions, and products as the Apple lab writes them (test/stand-ins/apple-lab.ts), with an app-hosted unit
// test target whose host becomes the version's app holding the products' test bundle.
import { existsSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { writeAppBundle, writeTestProducts } from "../../test/stand-ins/apple-lab.ts";
import { pointXctestrunAtApp } from "./tested-app.ts";
import { type PlistDict, type PlistValue, parseXmlPlist, writeXmlPlist } from "./xml-plist.ts";

const APP = { bundleId: "com.example.shop", name: "Shop" };
const signal = new AbortController().signal;
const fixture = (name: string) => new URL(`../../test/fixtures/apple/${name}`, import.meta.url);

const cleanups: string[] = [];
afterEach(async () => {
  for (const dir of cleanups.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function scratch() {
  const dir = await mkdtemp(path.join(tmpdir(), "testbay-tested-app-"));
  cleanups.push(dir);
  return dir;
}

async function read(file: string): Promise<PlistDict> {
  const parsed = parseXmlPlist(await readFile(file, "utf8"));
  if (!("value" in parsed) || !(parsed.value instanceof Map))
    throw new Error(`${file} is no plist dictionary`);
  return parsed.value;
}

/** The targets of either format, by name. */
function targets(plist: PlistDict): Map<string, PlistDict> {
  const found = new Map<string, PlistDict>();
  const configurations = plist.get("TestConfigurations");
  if (Array.isArray(configurations)) {
    const first = configurations[0] as PlistDict;
    for (const target of first.get("TestTargets") as PlistDict[]) {
      found.set(target.get("BlueprintName") as string, target);
    }
  } else {
    for (const [key, value] of plist)
      if (key !== "__xctestrun_metadata__") found.set(key, value as PlistDict);
  }
  return found;
}

/** The plist with the keys the agent may change removed from every target, to compare the rest. */
function withoutAppPaths(plist: PlistDict): string {
  for (const target of targets(plist).values()) {
    target.delete("UITargetAppPath");
    target.delete("TestHostPath");
  }
  return writeXmlPlist(plist);
}

describe("pointXctestrunAtApp", () => {
  it("points every UI target of a recorded FormatVersion 1 file at the version's app, and changes nothing else", async () => {
    const dir = await scratch();
    const xctestrun = path.join(dir, "UITesting_iphonesimulator12.1-x86_64-multitarget.xctestrun");
    await copyFile(fixture("xctestrun-v1-two-ui-targets.xctestrun"), xctestrun);
    const before = await read(xctestrun);
    const app = writeAppBundle(path.join(dir, "app", "Payload"), { ...APP, build: "240" });

    const result = await pointXctestrunAtApp(xctestrun, {
      appPath: app,
      bundleId: APP.bundleId,
      workDir: dir,
      signal,
    });

    expect(result).toEqual({
      changes: [
        "another-targetUITests: UITargetAppPath is the version's app",
        "sample-appUITests: UITargetAppPath is the version's app",
      ],
    });
    const after = await read(xctestrun);
    for (const [name, target] of targets(after)) {
      expect(target.get("UITargetAppPath"), name).toBe(app);
      // The runner stays the products' own.
      expect(target.get("TestHostPath")).toBe(targets(before).get(name)?.get("TestHostPath"));
    }
    expect(withoutAppPaths(after)).toBe(withoutAppPaths(before));
  });

  it("makes an app-hosted unit target of a recorded FormatVersion 2 file run in the version's app, with its test bundle", async () => {
    const dir = await scratch();
    const xctestrun = path.join(dir, "MyApp.xctestrun");
    await copyFile(fixture("xctestrun-man-v2.xctestrun"), xctestrun);
    const products = path.join(dir, "Debug-iphonesimulator");
    const copyInProducts = writeAppBundle(products, {
      bundleId: "com.example.MyApp",
      name: "MyApp",
      build: "239",
    });
    const testBundle = path.join(copyInProducts, "PlugIns", "MyAppTests.xctest");
    await mkdir(testBundle, { recursive: true });
    await writeFile(path.join(testBundle, "MyAppTests"), "stand-in test bundle\n");
    const app = writeAppBundle(path.join(dir, "app", "Payload"), {
      bundleId: "com.example.MyApp",
      name: "MyApp",
      build: "240",
    });

    const result = await pointXctestrunAtApp(xctestrun, {
      appPath: app,
      bundleId: "com.example.MyApp",
      workDir: path.join(dir, "tested-app"),
      signal,
    });

    expect(result).toEqual({
      changes: [
        "MyAppTests: UITargetAppPath is the version's app",
        "MyAppTests: TestHostPath is the version's app with the products' test bundles",
      ],
    });
    const target = targets(await read(xctestrun)).get("MyAppTests") as PlistDict;
    const host = target.get("TestHostPath") as string;
    expect(host).toBe(path.join(dir, "tested-app", "host-1", "MyApp.app"));
    // The host is the version's build, holding the products' test bundle where __TESTHOST__/PlugIns/… names it.
    expect(await readFile(path.join(host, "Info.plist"), "utf8")).toContain("<string>240</string>");
    expect(await readFile(path.join(host, "PlugIns", "MyAppTests.xctest", "MyAppTests"), "utf8")).toBe(
      "stand-in test bundle\n",
    );
    expect(target.get("UITargetAppPath")).toBe(host);
    expect(target.get("TestBundlePath")).toBe("__TESTHOST__/PlugIns/MyAppTests.xctest");
    // The products are left as uploaded.
    expect(await readFile(path.join(copyInProducts, "Info.plist"), "utf8")).toContain("<string>239</string>");
  });

  for (const formatVersion of [1, 2] as const) {
    it(`FormatVersion ${formatVersion} products with UI and app-hosted unit targets: each runs against the version's app`, async () => {
      const dir = await scratch();
      const xctestrun = writeTestProducts(path.join(dir, "tests"), {
        app: { ...APP, build: "239" },
        targets: [
          { name: "ShopUITests", ui: true },
          { name: "ShopTests", ui: false },
        ],
        formatVersion,
      });
      const app = writeAppBundle(path.join(dir, "app", "Payload"), { ...APP, build: "240" });

      const result = await pointXctestrunAtApp(xctestrun, {
        appPath: app,
        bundleId: APP.bundleId,
        workDir: path.join(dir, "tested-app"),
        signal,
      });

      expect(result).toEqual({
        changes: [
          "ShopUITests: UITargetAppPath is the version's app",
          "ShopTests: TestHostPath is the version's app with the products' test bundles",
        ],
      });
      const written = targets(await read(xctestrun));
      expect(written.get("ShopUITests")?.get("UITargetAppPath")).toBe(app);
      expect(written.get("ShopUITests")?.get("TestHostPath")).toBe(
        "__TESTROOT__/Debug-iphonesimulator/ShopUITests-Runner.app",
      );
      const host = written.get("ShopTests")?.get("TestHostPath") as string;
      expect(await readFile(path.join(host, "Info.plist"), "utf8")).toContain("<string>240</string>");
      expect(existsSync(path.join(host, "PlugIns", "ShopTests.xctest", "Info.plist"))).toBe(true);
    });
  }

  it("leaves a unit target hosted by another app as it is, and the file untouched", async () => {
    const dir = await scratch();
    const xctestrun = writeTestProducts(path.join(dir, "tests"), {
      app: { bundleId: "com.example.other", name: "Other" },
      targets: [{ name: "OtherTests", ui: false }],
    });
    const before = await readFile(xctestrun, "utf8");
    const app = writeAppBundle(path.join(dir, "app"), APP);
    const result = await pointXctestrunAtApp(xctestrun, {
      appPath: app,
      bundleId: APP.bundleId,
      workDir: dir,
      signal,
    });
    expect(result).toEqual({ changes: [] });
    expect(await readFile(xctestrun, "utf8")).toBe(before);
  });

  it("says why when the .xctestrun is not an XML plist", async () => {
    const dir = await scratch();
    const xctestrun = path.join(dir, "Shop.xctestrun");
    for (const [text, why] of [
      ["<plist><array/></plist>", /cannot be read to point it at the version's app: it is not a dictionary/],
      ["<plist><dict><key>A</key></dict></plist>", /a <dict> has a key without a value/],
    ] as const) {
      await writeFile(xctestrun, text);
      const result = await pointXctestrunAtApp(xctestrun, {
        appPath: dir,
        bundleId: APP.bundleId,
        workDir: dir,
        signal,
      });
      expect("error" in result && result.error).toMatch(why);
    }
  });
});

describe("a binary .xctestrun", () => {
  const path0 = process.env.PATH;
  afterEach(() => {
    process.env.PATH = path0;
    delete process.env.FAKE_PLUTIL_XML;
  });

  /** A plutil on PATH that "converts" by writing FAKE_PLUTIL_XML over the file, or fails without it. */
  async function fakePlutil(dir: string) {
    const bin = path.join(dir, "bin");
    await mkdir(bin);
    await writeFile(
      path.join(bin, "plutil"),
      [
        "#!/bin/sh",
        '[ "$1" = -convert ] && [ "$2" = xml1 ] || { echo "plutil: unexpected arguments $*" >&2; exit 2; }',
        'if [ -z "$FAKE_PLUTIL_XML" ]; then echo "$3: Property List error: not a property list" >&2; exit 1; fi',
        'cp "$FAKE_PLUTIL_XML" "$3"',
        "",
      ].join("\n"),
      { mode: 0o755 },
    );
    process.env.PATH = `${bin}${path.delimiter}${path0}`;
  }

  it("is turned into XML with plutil -convert xml1 first, then pointed at the app", async () => {
    const dir = await scratch();
    await fakePlutil(dir);
    process.env.FAKE_PLUTIL_XML = fileURLToPath(fixture("xctestrun-v1-two-ui-targets.xctestrun"));
    const xctestrun = path.join(dir, "Shop.xctestrun");
    await writeFile(xctestrun, "bplist00 stands for the binary form");
    const app = writeAppBundle(path.join(dir, "app"), APP);
    const result = await pointXctestrunAtApp(xctestrun, {
      appPath: app,
      bundleId: APP.bundleId,
      workDir: dir,
      signal,
    });
    expect("changes" in result && result.changes).toHaveLength(2);
    expect([...targets(await read(xctestrun)).values()].map((t) => t.get("UITargetAppPath"))).toEqual([
      app,
      app,
    ]);
  });

  it("that plutil cannot convert errors the step with what plutil said", async () => {
    const dir = await scratch();
    await fakePlutil(dir);
    const xctestrun = path.join(dir, "Shop.xctestrun");
    await writeFile(xctestrun, "bplist00 broken");
    const result = await pointXctestrunAtApp(xctestrun, {
      appPath: dir,
      bundleId: APP.bundleId,
      workDir: dir,
      signal,
    });
    expect(result).toEqual({
      error: `the test package's .xctestrun is a binary plist and plutil -convert xml1 failed: ${xctestrun}: Property List error: not a property list`,
    });
  });
});

describe("XML plists read and written back", () => {
  it("keeps every value and key order of the recorded .xctestrun files, and escapes what XML needs", async () => {
    for (const name of ["xctestrun-v1-two-ui-targets.xctestrun", "xctestrun-man-v2.xctestrun"]) {
      const first = parseXmlPlist(await readFile(fixture(name), "utf8"));
      if (!("value" in first)) throw new Error(first.error);
      const again = parseXmlPlist(writeXmlPlist(first.value));
      expect(again).toEqual(first);
    }
    const value: PlistValue = new Map<string, PlistValue>([
      ["a & <b>", "x < y & z > w"],
      ["empty", ""],
      [
        "numbers",
        [
          { element: "integer", text: "-3" },
          { element: "real", text: "1.5" },
        ],
      ],
      ["flags", [true, false]],
      ["nested", new Map()],
    ]);
    expect(parseXmlPlist(writeXmlPlist(value))).toEqual({ value });
  });
});
