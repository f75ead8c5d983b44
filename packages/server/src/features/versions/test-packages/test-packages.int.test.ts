import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../../test/harness.ts";
import { RawConnection } from "../../../../test/raw-http.ts";
import { newId } from "../../../ids.ts";
import { makeTestZip } from "../inspection/make-test-zip.ts";
import { fakeCounterProducts, makeXctestZip, xctestrunFixture } from "../inspection/make-xctest-zip.ts";

const fixtures = fileURLToPath(new URL("../../../../test/fixtures/binaries/", import.meta.url));
const fixture = (name: string) => readFile(path.join(fixtures, name));

let server: TestServer;
let headers: Record<string, string>;
let testApk: Buffer;

beforeAll(async () => {
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  headers = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  testApk = await fixture("app-basic-androidTest.apk");
  const created = await call(`${server.baseUrl}/apps`, {
    headers,
    json: { package_name: "com.example.basic", platform: "android" },
  });
  expect(created.status).toBe(201);
  const app = await fixture("app-basic.apk");
  for (const version of ["1.0.0", "1.0.1", "1.0.2", "1.0.3", "1.0.4"]) {
    const uploaded = await put(versionUrl(version), app);
    expect(uploaded.status).toBe(201);
  }
});
afterAll(() => server.close());

const versionUrl = (version: string) => `${server.baseUrl}/apps/com.example.basic/versions/${version}`;
const packageUrl = (version: string) => `${versionUrl(version)}/test-package`;

function put(url: string, body: Buffer) {
  return fetch(url, {
    method: "PUT",
    headers: { ...headers, "content-type": "application/octet-stream" },
    body,
  }).then(async (response) => ({
    status: response.status,
    headers: response.headers,
    // biome-ignore lint/suspicious/noExplicitAny: tests assert on response bodies field by field
    body: (await response.json()) as any,
  }));
}

/** Files in the data dir (staging, local blobs) and objects in the blob store, wherever it is. */
async function storedFiles(): Promise<string[]> {
  const root = server.config.dataDir;
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
    .filter((file) => !file.startsWith("testbay.db"));
  if (!server.config.storageUrl.startsWith("file:")) {
    for await (const key of server.app.services.blobs.keys()) files.push(`store:${key}`);
  }
  return files.sort();
}

const expectedObject = {
  package_name: "com.example.basic",
  version: "1.0.0",
  format: "apk",
  test: {
    package_name: "com.example.basic.test",
    runner: "androidx.test.runner.AndroidJUnitRunner",
    target_package: "com.example.basic",
    min_sdk: 24,
    target_sdk: 34,
  },
};

describe("XCUITest test packages (iOS)", () => {
  const iosVersionUrl = (version: string) => `${server.baseUrl}/apps/com.example.iosapp/versions/${version}`;
  const iosPackageUrl = (version: string) => `${iosVersionUrl(version)}/test-package`;
  const v2 = xctestrunFixture("v2-unit-and-ui.xctestrun");

  beforeAll(async () => {
    const created = await call(`${server.baseUrl}/apps`, {
      headers,
      json: { package_name: "com.example.iosapp", platform: "ios" },
    });
    expect(created.status).toBe(201);
    const ipa = await fixture("ios-xml-plist.ipa");
    for (const version of ["1.0", "1.1", "1.2", "1.3", "1.4"])
      expect((await put(iosVersionUrl(version), ipa)).status).toBe(201);
  });

  it("stores a zip of build-for-testing output: 201 with its .xctestrun's targets, then GET and the version show it", async () => {
    // The recorded products, their app given this app's bundle ID (the unit tests' host keeps the one the
    // .xctestrun names).
    const zip = makeXctestZip(v2, fakeCounterProducts("com.example.iosapp"));
    const stored = await put(iosPackageUrl("1.0"), zip);
    expect(stored.status).toBe(201);
    const expected = {
      package_name: "com.example.iosapp",
      version: "1.0",
      format: "xctest",
      size_bytes: zip.length,
      sha256: createHash("sha256").update(zip).digest("hex"),
      test: {
        xctestrun: "FakeCounterAppTest_FakeAppTestPlan_iphoneos18.2-arm64.xctestrun",
        test_targets: [
          { name: "FakeCounterAppTests", bundle_id: "saucelabs.FakeCounterApp", ui_target_app: null },
          {
            name: "FakeCounterAppUITests",
            bundle_id: "saucelabs.FakeCounterAppUITests.xctrunner",
            ui_target_app: "com.example.iosapp",
          },
        ],
      },
    };
    expect(stored.body).toMatchObject(expected);
    expect((await call(iosPackageUrl("1.0"), { headers })).body).toEqual(stored.body);
    expect((await call(iosVersionUrl("1.0"), { headers })).body.test_package).toEqual(stored.body);
    const bytes = await fetch(`${iosPackageUrl("1.0")}/binary`, { headers });
    expect(Buffer.from(await bytes.arrayBuffer()).equals(zip)).toBe(true);
  });

  it("refuses one whose UI tests drive another app with 400 test_package_mismatch naming both, and keeps nothing", async () => {
    const before = await storedFiles();
    const refused = await put(
      iosPackageUrl("1.1"),
      makeXctestZip(v2, fakeCounterProducts("com.example.other")),
    );
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: "test_package_mismatch",
      package_name: "com.example.iosapp",
      target_package: "com.example.other",
    });
    expect(refused.body.detail).toMatch(
      /FakeCounterAppUITests .*com\.example\.other.*com\.example\.iosapp 1\.1/,
    );
    expect(refused.body.fix).toMatch(/com\.example\.iosapp/);
    expect((await call(iosPackageUrl("1.1"), { headers })).status).toBe(404);
    expect(await storedFiles()).toEqual(before);
  });

  it("stores one without the app under test (the version's IPA is tested): 201, ui_target_app from UITargetAppBundleIdentifier, else null", async () => {
    // The recorded products of a UI-tests-only scheme, zipped without the app: the runner and its test bundle.
    const v1 = xctestrunFixture("v1-two-ui-targets.xctestrun").toString("utf8");
    const oneTarget = v1.replace(
      /\t\t<key>another-targetUITests<\/key>\n\t\t<dict>[\s\S]*?\n\t\t<\/dict>\n/,
      "",
    );
    expect(oneTarget).not.toContain("<key>another-targetUITests</key>");
    const runnerOnly = {
      bundles: {
        "Debug-iphonesimulator/sample-appUITests-Runner.app": "com.apple.test.sample-appUITests-Runner",
      },
      testBundles: ["Debug-iphonesimulator/sample-appUITests-Runner.app/PlugIns/sample-appUITests.xctest"],
    };
    const unnamed = await put(iosPackageUrl("1.3"), makeXctestZip(Buffer.from(oneTarget), runnerOnly));
    expect(unnamed.status, JSON.stringify(unnamed.body)).toBe(201);
    expect(unnamed.body.test.test_targets).toEqual([
      {
        name: "sample-appUITests",
        bundle_id: "com.apple.test.sample-appUITests-Runner",
        ui_target_app: null,
      },
    ]);

    const named = oneTarget.replace(
      /<key>UITargetAppPath<\/key>/,
      "<key>UITargetAppBundleIdentifier</key><string>com.example.iosapp</string>$&",
    );
    const stored = await put(iosPackageUrl("1.4"), makeXctestZip(Buffer.from(named), runnerOnly));
    expect(stored.status, JSON.stringify(stored.body)).toBe(201);
    expect(stored.body.test.test_targets).toEqual([
      {
        name: "sample-appUITests",
        bundle_id: "com.apple.test.sample-appUITests-Runner",
        ui_target_app: "com.example.iosapp",
      },
    ]);
  });

  it("refuses one missing its runner or test bundles with unsupported_binary, the path and the fix", async () => {
    const refused = await put(iosPackageUrl("1.2"), makeXctestZip(v2, { bundles: {} }));
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: "unsupported_binary", reason: "xctest_unreadable" });
    // The unit tests' host is the app, holding their test bundle: that app cannot be left out.
    expect(refused.body.detail).toMatch(
      /test target "FakeCounterAppTests"'s test host \(TestHostPath\) "Debug-iphoneos\/FakeCounterApp\.app" is not in the zip/,
    );
    const noRunner = makeXctestZip(v2, {
      bundles: { "Debug-iphoneos/FakeCounterApp.app": "com.example.iosapp" },
      testBundles: ["Debug-iphoneos/FakeCounterApp.app/PlugIns/FakeCounterAppTests.xctest"],
    });
    const withoutRunner = await put(iosPackageUrl("1.2"), noRunner);
    expect(withoutRunner.status).toBe(400);
    expect(withoutRunner.body).toMatchObject({ code: "unsupported_binary", reason: "xctest_unreadable" });
    expect(withoutRunner.body.detail).toMatch(
      /"FakeCounterAppUITests"'s test host \(TestHostPath\) "Debug-iphoneos\/FakeCounterAppUITests-Runner\.app" is not in the zip/,
    );
    expect(withoutRunner.body.fix).toMatch(/zip -r .*-Runner\.app and the test bundles/);
    expect((await call(iosPackageUrl("1.2"), { headers })).status).toBe(404);
  });

  it("refuses an Android test APK for an iOS app: it targets another package", async () => {
    const refused = await put(iosPackageUrl("1.2"), testApk);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: "test_package_mismatch",
      target_package: "com.example.basic",
    });
  });
});

describe("test packages", () => {
  it("stores an instrumentation APK: 201 with what its manifest says, then GET, HEAD and the version show it", async () => {
    expect((await call(packageUrl("1.0.0"), { headers })).body.code).toBe("test_package_not_found");
    const head404 = await fetch(packageUrl("1.0.0"), { method: "HEAD", headers });
    expect(head404.status).toBe(404);

    const uploaded = await put(packageUrl("1.0.0"), testApk);
    expect(uploaded.status).toBe(201);
    expect(uploaded.headers.get("location")).toBe("/v1/apps/com.example.basic/versions/1.0.0/test-package");
    expect(uploaded.body).toMatchObject({
      ...expectedObject,
      size_bytes: testApk.length,
      sha256: createHash("sha256").update(testApk).digest("hex"),
    });

    const got = await call(packageUrl("1.0.0"), { headers });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(uploaded.body);
    expect((await fetch(packageUrl("1.0.0"), { method: "HEAD", headers })).status).toBe(200);

    const version = await call(versionUrl("1.0.0"), { headers });
    expect(version.body.test_package).toEqual(uploaded.body);
    const list = await call(`${server.baseUrl}/apps/com.example.basic/versions`, { headers });
    const byVersion = new Map(list.body.items.map((item: { version: string }) => [item.version, item]));
    expect((byVersion.get("1.0.0") as { test_package: unknown }).test_package).toEqual(uploaded.body);
    expect((byVersion.get("1.0.1") as { test_package: unknown }).test_package).toBeNull();
  });

  it("serves the bytes, whole and by Range, to agents too", async () => {
    const agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
    const whole = await fetch(`${packageUrl("1.0.0")}/binary`, { headers: agent });
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-disposition")).toMatch(/\.apk"?$/);
    expect(Buffer.from(await whole.arrayBuffer()).equals(testApk)).toBe(true);

    const part = await fetch(`${packageUrl("1.0.0")}/binary`, {
      headers: { ...agent, range: "bytes=10-19" },
    });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 10-19/${testApk.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(testApk.subarray(10, 20))).toBe(true);
  });

  it("refuses a test APK that instruments another app with 400 naming both, and keeps nothing", async () => {
    const before = await storedFiles();
    const refused = await put(packageUrl("1.0.1"), await fixture("app-other-androidTest.apk"));
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: "test_package_mismatch",
      package_name: "com.example.basic",
      target_package: "com.example.other",
    });
    expect(refused.body.detail).toMatch(/com\.example\.other/);
    expect(refused.body.detail).toMatch(/com\.example\.basic/);
    expect(refused.body.fix).toBeTruthy();
    expect((await call(packageUrl("1.0.1"), { headers })).status).toBe(404);
    expect(await storedFiles()).toEqual(before);
  });

  it("refuses an app APK (no <instrumentation>) and a zip that is no APK with unsupported_binary", async () => {
    for (const file of ["app-basic.apk", "plain.zip"]) {
      const refused = await put(packageUrl("1.0.2"), await fixture(file));
      expect(refused.status, file).toBe(400);
      expect(refused.body.code, file).toBe("unsupported_binary");
      expect(refused.body.fix, file).toMatch(/androidTest/);
    }
    expect((await call(packageUrl("1.0.2"), { headers })).status).toBe(404);
  });

  it("refuses a zip with an .xctestrun it cannot run with unsupported_binary, saying what the zip must hold", async () => {
    const xctest = makeTestZip([
      { name: "App_iphoneos17.0-arm64.xctestrun", data: Buffer.from("<plist/>") },
      { name: "Debug-iphoneos/AppUITests-Runner.app/Info.plist", data: Buffer.from("<plist/>") },
    ]);
    const refused = await put(packageUrl("1.0.2"), xctest);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: "unsupported_binary", reason: "xctest_unreadable" });
    expect(refused.body.detail).toMatch(/the \.xctestrun is not a valid XML plist/);
    expect(refused.body.fix).toMatch(/build-for-testing/);
  });

  it("answers 409 test_package_exists from the headers: no 100 Continue, no body read", async () => {
    expect((await put(packageUrl("1.0.3"), testApk)).status).toBe(201);
    const connection = await RawConnection.open(server.origin);
    connection.send(
      `PUT /v1/apps/com.example.basic/versions/1.0.3/test-package HTTP/1.1\r\nHost: x\r\nx-api-key: ${headers["x-api-key"]}\r\n` +
        `Content-Type: application/octet-stream\r\nContent-Length: ${testApk.length}\r\nExpect: 100-continue\r\n\r\n`,
    );
    const response = await connection.finalResponse();
    const closed = await connection.closedByServer();
    connection.destroy();
    expect(response.status).toBe(409);
    expect(response.json).toMatchObject({ code: "test_package_exists" });
    expect(response.json.fix).toBeTruthy();
    expect(connection.text.startsWith("HTTP/1.1 100")).toBe(false);
    expect(closed).toBe(true);
  });

  it("sends 100 Continue for a test package it wants, then takes the body", async () => {
    const connection = await RawConnection.open(server.origin);
    connection.send(
      `PUT /v1/apps/com.example.basic/versions/1.0.4/test-package HTTP/1.1\r\nHost: x\r\nx-api-key: ${headers["x-api-key"]}\r\n` +
        `Content-Length: ${testApk.length}\r\nExpect: 100-continue\r\n\r\n`,
    );
    await connection.waitFor((received) => received.startsWith("HTTP/1.1 100 Continue\r\n\r\n"));
    await connection.sendBody(testApk);
    const response = await connection.finalResponse();
    connection.destroy();
    expect(response.status).toBe(201);
  });

  it("answers 404 for an unknown version or app, before the body", async () => {
    const unknownVersion = await put(packageUrl("9.9.9"), testApk);
    expect(unknownVersion.status).toBe(404);
    expect(unknownVersion.body.code).toBe("app_version_not_found");
    const unknownApp = await put(
      `${server.baseUrl}/apps/com.example.nope/versions/1.0.0/test-package`,
      testApk,
    );
    expect(unknownApp.body.code).toBe("app_not_found");
    expect((await call(`${packageUrl("9.9.9")}/binary`, { headers })).body.code).toBe(
      "app_version_not_found",
    );
  });

  it("is invisible to another organization", async () => {
    const other = { "x-api-key": await server.token(await server.createClient("globex", "ci")) };
    expect((await call(packageUrl("1.0.0"), { headers: other })).status).toBe(404);
    expect((await call(`${packageUrl("1.0.0")}/binary`, { headers: other })).status).toBe(404);
    const put404 = await fetch(packageUrl("1.0.1"), {
      method: "PUT",
      headers: { ...other, "content-type": "application/octet-stream" },
      body: testApk,
    });
    expect(put404.status).toBe(404);
  });

  it("removes on start a stored test package no record refers to (a crash between store and record)", async () => {
    const blobs = path.join(server.config.dataDir, "blobs", "testpackages", "org_crashed");
    await mkdir(blobs, { recursive: true });
    const orphan = newId("blob", server.clock.now() - 60 * 60 * 1000);
    const fresh = newId("blob", server.clock.now());
    await writeFile(path.join(blobs, orphan), "stored, never recorded");
    await writeFile(path.join(blobs, fresh), "an upload in flight on another instance");

    const restarted = await startTestServer({ shareWith: server, clock: server.clock });
    await restarted.close();
    const left = await storedFiles();
    expect(left).not.toContain(`blobs/testpackages/org_crashed/${orphan}`);
    expect(left).toContain(`blobs/testpackages/org_crashed/${fresh}`);
    // Recorded test packages are untouched.
    expect((await fetch(`${packageUrl("1.0.0")}/binary`, { headers })).status).toBe(200);
  });
});
