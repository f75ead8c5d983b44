import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inspectTestPackage, XctestPackageError } from "./inspect-test-package.ts";
import { binaryPlistOf } from "./make-test-plist.ts";
import { makeTestZip } from "./make-test-zip.ts";
import { fakeCounterProducts, makeXctestZip, xctestrunFixture } from "./make-xctest-zip.ts";
import { readPlistValue } from "./plist-value.ts";
import { UnsupportedBinaryError } from "./unsupported-binary-error.ts";

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "testbay-xctest-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

let files = 0;
async function inspect(zip: Buffer) {
  const path = join(scratch, `tests-${++files}.zip`);
  await writeFile(path, zip);
  return inspectTestPackage(path);
}

const v2 = xctestrunFixture("v2-unit-and-ui.xctestrun");
const fakeCounterTargets = (app = "saucelabs.FakeCounterApp") => [
  { name: "FakeCounterAppTests", bundle_id: "saucelabs.FakeCounterApp", ui_target_app: null },
  {
    name: "FakeCounterAppUITests",
    bundle_id: "saucelabs.FakeCounterAppUITests.xctrunner",
    ui_target_app: app,
  },
];

describe("XCUITest test packages", () => {
  it("reads the zipped contents of Build/Products: targets, hosts and the app the UI tests drive", async () => {
    const result = await inspect(makeXctestZip(v2, fakeCounterProducts()));
    expect(result).toEqual({
      format: "xctest",
      test: {
        xctestrun: "FakeCounterAppTest_FakeAppTestPlan_iphoneos18.2-arm64.xctestrun",
        test_targets: fakeCounterTargets(),
      },
    });
  });

  it("takes the UI target app's bundle ID from the app's own Info.plist in the zip", async () => {
    // The .xctestrun names the app by path only: what the bundle there says is the answer.
    const result = await inspect(makeXctestZip(v2, fakeCounterProducts("com.example.other")));
    expect(result.test).toMatchObject({ test_targets: fakeCounterTargets("com.example.other") });
  });

  it("reads the Products folder zipped with its name, the .xctestrun one folder down", async () => {
    const zip = makeXctestZip(v2, { ...fakeCounterProducts(), xctestrunPath: "Products/App.xctestrun" });
    expect(await inspect(zip)).toEqual({
      format: "xctest",
      test: { xctestrun: "Products/App.xctestrun", test_targets: fakeCounterTargets() },
    });
  });

  it("reads a binary .xctestrun and binary Info.plists alike", async () => {
    const binary = binaryPlistOf(readPlistValue(v2, "the .xctestrun"));
    const products = fakeCounterProducts();
    const zip = makeXctestZip(binary, {
      ...products,
      bundles: {},
      extra: Object.entries(products.bundles).map(([bundle, id]) => ({
        name: `${bundle}/Info.plist`,
        data: binaryPlistOf(new Map([["CFBundleIdentifier", id]])),
      })),
    });
    expect((await inspect(zip)).test).toEqual({
      xctestrun: "FakeCounterAppTest_FakeAppTestPlan_iphoneos18.2-arm64.xctestrun",
      test_targets: fakeCounterTargets(),
    });
  });

  it("reads a host's bundle ID from its Info.plist when the .xctestrun does not say it", async () => {
    const zip = makeXctestZip(xctestrunFixture("man-v2.xctestrun"), {
      bundles: { "Debug-iphonesimulator/MyApp.app": "com.example.MyApp" },
      testBundles: ["Debug-iphonesimulator/MyApp.app/PlugIns/MyAppTests.xctest"],
    });
    expect((await inspect(zip)).test).toMatchObject({
      test_targets: [
        { name: "MyAppTests", bundle_id: "com.example.MyApp", ui_target_app: "com.example.MyApp" },
      ],
    });
  });

  it("reads FormatVersion 1 with a UI test target per app", async () => {
    const zip = makeXctestZip(xctestrunFixture("v1-two-ui-targets.xctestrun"), {
      bundles: {
        "Debug-iphonesimulator/another-target.app": "com.agoda.another-target",
        "Debug-iphonesimulator/sample-app.app": "com.agoda.sample-app",
        "Debug-iphonesimulator/another-targetUITests-Runner.app":
          "com.apple.test.another-targetUITests-Runner",
        "Debug-iphonesimulator/sample-appUITests-Runner.app": "com.apple.test.sample-appUITests-Runner",
      },
      testBundles: [
        "Debug-iphonesimulator/another-targetUITests-Runner.app/PlugIns/another-targetUITests.xctest",
        "Debug-iphonesimulator/sample-appUITests-Runner.app/PlugIns/sample-appUITests.xctest",
      ],
    });
    expect((await inspect(zip)).test).toMatchObject({
      test_targets: [
        {
          name: "another-targetUITests",
          bundle_id: "com.apple.test.another-targetUITests-Runner",
          ui_target_app: "com.agoda.another-target",
        },
        {
          name: "sample-appUITests",
          bundle_id: "com.apple.test.sample-appUITests-Runner",
          ui_target_app: "com.agoda.sample-app",
        },
      ],
    });
  });

  it("accepts the products without the app under test: the runners and their test bundles suffice (API.md §4b)", async () => {
    // The agent tests the version's own IPA, so a copy of the app is not needed; without one, the app the UI
    // tests drive is what UITargetAppBundleIdentifier says, else unknown (null).
    const v1 = xctestrunFixture("v1-two-ui-targets.xctestrun");
    const runnersOnly = {
      bundles: {
        "Debug-iphonesimulator/another-targetUITests-Runner.app":
          "com.apple.test.another-targetUITests-Runner",
        "Debug-iphonesimulator/sample-appUITests-Runner.app": "com.apple.test.sample-appUITests-Runner",
      },
      testBundles: [
        "Debug-iphonesimulator/another-targetUITests-Runner.app/PlugIns/another-targetUITests.xctest",
        "Debug-iphonesimulator/sample-appUITests-Runner.app/PlugIns/sample-appUITests.xctest",
      ],
    };
    const targets = (another: string | null, sample: string | null) => [
      {
        name: "another-targetUITests",
        bundle_id: "com.apple.test.another-targetUITests-Runner",
        ui_target_app: another,
      },
      {
        name: "sample-appUITests",
        bundle_id: "com.apple.test.sample-appUITests-Runner",
        ui_target_app: sample,
      },
    ];
    expect((await inspect(makeXctestZip(v1, runnersOnly))).test).toEqual({
      xctestrun: "FakeCounterAppTest_FakeAppTestPlan_iphoneos18.2-arm64.xctestrun",
      test_targets: targets(null, null),
    });

    // UITargetAppBundleIdentifier names the app with or without a copy, and wins over the copy's Info.plist.
    const named = Buffer.from(
      v1
        .toString("utf8")
        .replace(
          /<key>UITargetAppPath<\/key>(\s*)<string>__TESTROOT__\/Debug-iphonesimulator\/([\w-]+)\.app<\/string>/g,
          "<key>UITargetAppBundleIdentifier</key>$1<string>com.example.$2</string>$1$&",
        ),
    );
    expect((await inspect(makeXctestZip(named, runnersOnly))).test).toMatchObject({
      test_targets: targets("com.example.another-target", "com.example.sample-app"),
    });
    const oneCopy = {
      ...runnersOnly,
      bundles: { ...runnersOnly.bundles, "Debug-iphonesimulator/sample-app.app": "com.agoda.sample-app" },
    };
    expect((await inspect(makeXctestZip(named, oneCopy))).test).toMatchObject({
      test_targets: targets("com.example.another-target", "com.example.sample-app"),
    });
    // Without the identifier, the copy's Info.plist says it; where there is no copy, null.
    expect((await inspect(makeXctestZip(v1, oneCopy))).test).toMatchObject({
      test_targets: targets(null, "com.agoda.sample-app"),
    });
  });

  it("leaves macOS resource forks (__MACOSX/._X.xctestrun) out", async () => {
    const fork = { name: "__MACOSX/._App.xctestrun", data: Buffer.from([0, 5, 22, 7]) };
    const zip = makeXctestZip(v2, { ...fakeCounterProducts(), extra: [fork] });
    expect((await inspect(zip)).test).toMatchObject({ test_targets: fakeCounterTargets() });
    // A zip whose only .xctestrun is a resource fork is no XCUITest bundle at all.
    await expect(inspect(makeTestZip([fork]))).rejects.not.toThrow(XctestPackageError);
  });
});

describe("XCUITest test packages refused, each with its reason", () => {
  const refused = async (zip: Buffer, message: RegExp) => {
    const error = await inspect(zip).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(XctestPackageError);
    expect((error as Error).message).toMatch(message);
  };
  const products = fakeCounterProducts();

  it("two .xctestrun files near the top: a test package runs one", async () => {
    const zip = makeXctestZip(v2, {
      ...products,
      extra: [{ name: "FakeCounterAppTest_Other_iphoneos18.2-arm64.xctestrun", data: v2 }],
    });
    await refused(
      zip,
      /holds 2 \.xctestrun files \("FakeCounterAppTest_FakeAppTestPlan.*", "FakeCounterAppTest_Other/,
    );
  });

  it("an .xctestrun more than one folder down (Build/Products zipped from above)", async () => {
    const zip = makeXctestZip(v2, { ...products, xctestrunPath: "Build/Products/App.xctestrun" });
    await refused(zip, /"Build\/Products\/App\.xctestrun", more than one folder down/);
  });

  it("a product the .xctestrun names that is not in the zip", async () => {
    const noRunner = {
      ...products,
      bundles: { "Debug-iphoneos/FakeCounterApp.app": "saucelabs.FakeCounterApp" },
      testBundles: ["Debug-iphoneos/FakeCounterApp.app/PlugIns/FakeCounterAppTests.xctest"],
    };
    await refused(
      makeXctestZip(v2, noRunner),
      /test target "FakeCounterAppUITests"'s test host \(TestHostPath\) "Debug-iphoneos\/FakeCounterAppUITests-Runner\.app" is not in the zip/,
    );
    await refused(
      makeXctestZip(v2, { ...products, testBundles: [] }),
      /"FakeCounterAppTests"'s test bundle \(TestBundlePath\) "Debug-iphoneos\/FakeCounterApp\.app\/PlugIns\/FakeCounterAppTests\.xctest" is not in the zip/,
    );
    await refused(
      makeXctestZip(v2, { bundles: {} }),
      /is not in the zip; zip everything xcodebuild build-for-testing writes/,
    );
    // An app-hosted unit test target's host is the app, and its test bundle lies inside it: without the app
    // the test bundle is missing, so such a package must hold the app.
    await refused(
      makeXctestZip(v2, {
        bundles: {
          "Debug-iphoneos/FakeCounterAppUITests-Runner.app": "saucelabs.FakeCounterAppUITests.xctrunner",
        },
        testBundles: ["Debug-iphoneos/FakeCounterAppUITests-Runner.app/PlugIns/FakeCounterAppUITests.xctest"],
      }),
      /"FakeCounterAppTests"'s test host \(TestHostPath\) "Debug-iphoneos\/FakeCounterApp\.app" is not in the zip/,
    );
  });

  it("an app whose bundle ID cannot be read", async () => {
    const zip = makeXctestZip(v2, {
      ...products,
      bundles: {
        "Debug-iphoneos/FakeCounterAppUITests-Runner.app": "saucelabs.FakeCounterAppUITests.xctrunner",
      },
      extra: [{ name: "Debug-iphoneos/FakeCounterApp.app/FakeCounterApp", data: Buffer.alloc(4) }],
    });
    await refused(zip, /"Debug-iphoneos\/FakeCounterApp\.app" has no Info\.plist to read its bundle ID from/);
    const broken = makeXctestZip(v2, {
      ...products,
      bundles: {
        "Debug-iphoneos/FakeCounterAppUITests-Runner.app": "saucelabs.FakeCounterAppUITests.xctrunner",
      },
      extra: [
        { name: "Debug-iphoneos/FakeCounterApp.app/Info.plist", data: Buffer.from("<plist><dict/></plist>") },
      ],
    });
    await refused(
      broken,
      /"Debug-iphoneos\/FakeCounterApp\.app" is unreadable: its Info\.plist has no CFBundleIdentifier/,
    );
  });

  it("paths that lead out of the folder the zip is unpacked into", async () => {
    for (const name of ["../evil.sh", "Debug-iphoneos/../../evil", "/etc/evil", "C:/evil", "a\\..\\evil"]) {
      const zip = makeXctestZip(v2, { ...products, extra: [{ name, data: Buffer.alloc(1) }] });
      await refused(zip, /a path that leads out of the folder the zip is unpacked into/);
    }
    const climbing = Buffer.from(
      v2
        .toString("utf8")
        .replaceAll(
          "__TESTROOT__/Debug-iphoneos/FakeCounterApp.app</string>",
          "__TESTROOT__/../FakeCounterApp.app</string>",
        ),
    );
    await refused(
      makeXctestZip(climbing, products),
      /names "__TESTROOT__\/\.\.\/FakeCounterApp\.app", which leads out of the products/,
    );
  });

  it("symbolic links that point out of the folder the zip is unpacked into", async () => {
    const link = (name: string, target: string) => ({ name, data: Buffer.from(target), unixMode: 0o120777 });
    for (const target of ["/etc", "../../..", "Debug-iphoneos/../../../x", "..\\evil"]) {
      const zip = makeXctestZip(v2, { ...products, extra: [link("Debug-iphoneos/escape", target)] });
      await refused(zip, /a symbolic link to .*, outside the folder the zip is unpacked into/);
    }
    // Links inside the products (a framework's Versions/Current) are fine.
    const inside = makeXctestZip(v2, {
      ...products,
      extra: [link("Debug-iphoneos/FakeCounterApp.app/Frameworks/Kit.framework/Current", "../Kit.framework")],
    });
    expect((await inspect(inside)).format).toBe("xctest");
  });

  it("an .xctestrun that is not a plist, or not one of ours", async () => {
    await refused(
      makeXctestZip(Buffer.from("garbage"), products),
      /the \.xctestrun is not a valid XML plist: it is neither/,
    );
    await refused(
      makeXctestZip(Buffer.from("<plist><dict>"), products),
      /the \.xctestrun is not a valid XML plist: it is not well-formed XML/,
    );
    const v3 = Buffer.from(v2.toString("utf8").replace("<integer>2</integer>", "<integer>3</integer>"));
    await refused(makeXctestZip(v3, products), /has FormatVersion "3"/);
  });

  it("an .xctestrun whose declared size is past what we read, before inflating it", async () => {
    const zip = makeTestZip([
      { name: "App.xctestrun", data: Buffer.alloc(10), deflate: true, declaredSize: 64 * 1024 * 1024 },
    ]);
    await refused(zip, /App\.xctestrun declares 67108864 bytes uncompressed, more than the 4194304 we read/);
  });
});

describe("hostile .xctestrun files", () => {
  const products = fakeCounterProducts();

  it("refuses a binary plist whose arrays each point twice at the next (2^40 paths), at once", async () => {
    // Object 0 is the top dictionary {TestConfigurations: chain}; object 2 + i is [3 + i, 3 + i].
    const objects: Buffer[] = [
      Buffer.from([0xd1, 1, 2]),
      Buffer.concat([Buffer.from([0x5f, 0x10, 18]), Buffer.from("TestConfigurations")]),
    ];
    for (let i = 0; i < 40; i++) objects.push(Buffer.from([0xa2, 3 + i, 3 + i]));
    objects.push(Buffer.from([0x51, 0x78]));
    const error = await inspect(makeXctestZip(rawBinaryPlist(objects), products)).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(XctestPackageError);
    expect((error as Error).message).toMatch(/nests deeper than the 32 levels|more than the 200000 objects/);
  });

  it("refuses a binary plist whose dictionary contains itself", async () => {
    const objects = [
      Buffer.from([0xd1, 1, 0]),
      Buffer.concat([Buffer.from([0x5a]), Buffer.from("AppTests00")]),
    ];
    await expect(inspect(makeXctestZip(rawBinaryPlist(objects), products))).rejects.toThrow(
      /nests deeper than the 32 levels/,
    );
  });

  it("refuses an XML plist nested 10,000 deep", async () => {
    const deep = Buffer.from(`<plist>${"<array>".repeat(10_000)}${"</array>".repeat(10_000)}</plist>`);
    await expect(inspect(makeXctestZip(deep, products))).rejects.toThrow(/nests deeper than the 32 levels/);
  });

  it("refuses an XML plist with more objects than we read", async () => {
    const wide = Buffer.from(`<plist><array>${"<true/>".repeat(250_000)}</array></plist>`);
    await expect(inspect(makeXctestZip(wide, products))).rejects.toThrow(
      /more than the 200000 objects we read/,
    );
  });

  it("ends every mangled copy of a real .xctestrun, binary and XML, as a refusal or an answer", async () => {
    const binary = binaryPlistOf(readPlistValue(v2, "the .xctestrun"));
    // A fixed seed: the same 300 mangled files on every run, so a failure can be reproduced.
    let seed = 16;
    const random = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % below;
    };
    const outcomes = { refused: 0, read: 0 };
    for (let i = 0; i < 300; i++) {
      const source = i % 2 === 0 ? binary : v2;
      const mangled = Buffer.from(source);
      if (i % 3 === 0) {
        const cut = mangled.subarray(0, random(mangled.length));
        mangled.fill(0);
        cut.copy(mangled);
      }
      for (let flips = 1 + random(8); flips > 0; flips--) mangled[random(mangled.length)] = random(256);
      const result = await inspect(makeXctestZip(mangled, products)).catch((caught: unknown) => caught);
      if (result instanceof Error) {
        expect(result, result.stack).toBeInstanceOf(UnsupportedBinaryError);
        outcomes.refused++;
      } else {
        expect(result).toMatchObject({ format: "xctest" });
        outcomes.read++;
      }
    }
    // Both happen: a flipped byte in a string is still a plist; a cut one is not.
    expect(outcomes.refused).toBeGreaterThan(0);
    expect(outcomes.read).toBeGreaterThan(0);
  });
});

/** A bplist00 file of the given objects, object 0 at the top, with two-byte offsets and one-byte references. */
function rawBinaryPlist(objects: Buffer[]): Buffer {
  const offsets: number[] = [];
  let body = Buffer.from("bplist00");
  for (const object of objects) {
    offsets.push(body.length);
    body = Buffer.concat([body, object]);
  }
  const table = Buffer.alloc(offsets.length * 2);
  offsets.forEach((offset, i) => {
    table.writeUInt16BE(offset, i * 2);
  });
  const trailer = Buffer.alloc(32);
  trailer[6] = 2;
  trailer[7] = 1;
  trailer.writeBigUInt64BE(BigInt(objects.length), 8);
  trailer.writeBigUInt64BE(0n, 16);
  trailer.writeBigUInt64BE(BigInt(body.length), 24);
  return Buffer.concat([body, table, trailer]);
}
