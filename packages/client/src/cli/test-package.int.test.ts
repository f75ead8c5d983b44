// `--test-file` on `testbay upload` and `testbay run` against a real Testbay server, with the real fixtures:
// the test APK built for com.example.basic, and one built for another app (its instrumentation targets
// com.example.other), which the server refuses for com.example.basic and which differs from the first.
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../../server/test/harness.ts";
import { type CliRun, inProcessCli, sleepMovesClock } from "../../test/in-process-cli.ts";
import { Testbay } from "../sdk/client.ts";
import type { FetchLike } from "../sdk/transport.ts";

const fixture = (name: string) =>
  fileURLToPath(new URL(`../../../server/test/fixtures/binaries/${name}`, import.meta.url));
const appApk = fixture("app-basic.apk");
const testApk = fixture("app-basic-androidTest.apk");
const otherTestApk = fixture("app-other-androidTest.apk");
const app = "com.example.basic";

let server: TestServer;
let dir: string;
let ci: { client_id: string; client_secret: string };
let admin: Testbay;

const sha256 = async (file: string) =>
  createHash("sha256")
    .update(await readFile(file))
    .digest("hex");

const runCli = inProcessCli(() => ({ server, credentials: ci, cwd: dir }));
const cli = (argv: string[], fetch?: FetchLike) => runCli(argv, fetch ? { fetch } : {});

/** The calls a run made, as "METHOD path status", token call left out. */
const calls = (run: CliRun) =>
  run.responses.filter((r) => r.path !== "/oauth/token").map((r) => `${r.method} ${r.path} ${r.status}`);

const versionPath = (version: string) => `/apps/${app}/versions/${version}`;
const testPackagePath = (version: string) => `${versionPath(version)}/test-package`;

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(path.join(tmpdir(), "testbay-cli-test-package-"));
  ci = await server.createClient("acme", "ci");
  const setup = await server.createClient("acme", "ci");
  admin = new Testbay({
    baseUrl: server.baseUrl,
    clientId: setup.client_id,
    clientSecret: setup.client_secret,
    audience: server.config.audience,
    clock: sleepMovesClock(server.clock),
  });
  await admin.apps.create({ package_name: app, platform: "android" });
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("testbay upload --test-file", () => {
  it("uploads the build, then its test package (201), which HEAD and GET then show", async () => {
    const run = await cli([
      "upload",
      "--app",
      app,
      "--version",
      "1.0.0",
      "--file",
      appApk,
      "--test-file",
      testApk,
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(calls(run)).toEqual([
      `HEAD ${versionPath("1.0.0")} 404`,
      "GET /me 200",
      `PUT ${versionPath("1.0.0")} 201`,
      `GET ${testPackagePath("1.0.0")} 404`,
      `PUT ${testPackagePath("1.0.0")} 201`,
    ]);
    const local = await sha256(testApk);
    expect(run.stderr).toMatch(
      new RegExp(
        `Uploaded the test package of com\\.example\\.basic 1\\.0\\.0: [\\d.]+ (KiB|bytes), sha256 ${local.slice(0, 12)}…, \\S+ instrumenting com\\.example\\.basic\\.`,
      ),
    );
    const out = JSON.parse(run.stdout);
    expect(out).toMatchObject({ outcome: "uploaded", exit_code: 0 });
    expect(out.test_package_upload).toMatchObject({
      outcome: "uploaded",
      test_package: { sha256: local, format: "apk", test: { target_package: app } },
    });

    const head = await admin.transport.send({ method: "HEAD", path: testPackagePath("1.0.0") });
    expect(head.status).toBe(200);
    expect((await admin.versions.testPackage(app, "1.0.0"))?.sha256).toBe(local);
    expect((await admin.versions.get(app, "1.0.0")).test_package?.sha256).toBe(local);

    const target = path.join(dir, "downloaded-androidTest.apk");
    const download = await admin.versions.downloadTestPackage(app, "1.0.0", target);
    expect(download).toMatchObject({ status: 200, sha256: local });
    expect(await sha256(target)).toBe(local);
  });

  it("a second upload of the same files skips both transfers and says so", async () => {
    const run = await cli([
      "upload",
      "--app",
      app,
      "--version",
      "1.0.0",
      "--file",
      appApk,
      "--test-file",
      testApk,
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(calls(run)).toEqual([
      `HEAD ${versionPath("1.0.0")} 200`,
      `GET ${versionPath("1.0.0")} 200`,
      `GET ${testPackagePath("1.0.0")} 200`,
    ]);
    expect(run.stderr).toContain(`${app} 1.0.0 is registered already with this very build`);
    expect(run.stderr).toMatch(
      /The test package of com\.example\.basic 1\.0\.0 is uploaded already, the same file \(sha256 [0-9a-f]{12}….*\): skipped the upload \(nothing was transferred\)/,
    );
    const out = JSON.parse(run.stdout);
    expect(out.outcome).toBe("skipped");
    expect(out.test_package_upload.outcome).toBe("skipped");
  });

  it("refuses another test file for the version with exit 4, both sha256 prefixes and 'bump the version'", async () => {
    const run = await cli([
      "upload",
      "--app",
      app,
      "--version",
      "1.0.0",
      "--file",
      appApk,
      "--test-file",
      otherTestApk,
    ]);
    expect(run.code, run.stderr).toBe(4);
    expect(calls(run)).toEqual([
      `HEAD ${versionPath("1.0.0")} 200`,
      `GET ${versionPath("1.0.0")} 200`,
      `GET ${testPackagePath("1.0.0")} 200`,
    ]);
    const [storedSha, otherSha] = [await sha256(testApk), await sha256(otherTestApk)];
    expect(run.stderr).toContain("error: test_package_exists (different_test_package), 409");
    expect(run.stderr).toContain(`sha256 ${storedSha.slice(0, 12)}…`);
    expect(run.stderr).toContain(`sha256 ${otherSha.slice(0, 12)}…`);
    expect(run.stderr).toContain(
      `fix: Bump the version: upload this build and these tests under a new version`,
    );
    expect((await admin.versions.testPackage(app, "1.0.0"))?.sha256).toBe(storedSha);
  });

  it("prints the server's detail and fix for a test APK of another app (400 test_package_mismatch)", async () => {
    const run = await cli([
      "upload",
      "--app",
      app,
      "--version",
      "1.0.1",
      "--file",
      appApk,
      "--test-file",
      otherTestApk,
    ]);
    expect(run.code, run.stderr).toBe(4);
    expect(calls(run).at(-1)).toBe(`PUT ${testPackagePath("1.0.1")} 400`);
    expect(run.stderr).toMatch(
      /error: test_package_mismatch, 400 on PUT \S+: This test APK \(\S+\) instruments com\.example\.other, but it was uploaded for com\.example\.basic 1\.0\.1\./,
    );
    expect(run.stderr).toContain(
      "fix: Upload the test APK built with com.example.basic (its <instrumentation android:targetPackage> must be com.example.basic)",
    );
    expect(await admin.versions.exists(app, "1.0.1")).toBe(true);
    expect(await admin.versions.testPackage(app, "1.0.1")).toBeNull();
  });

  it("refuses a missing test file with exit 2 before any request", async () => {
    const run = await cli([
      "upload",
      "--app",
      app,
      "--version",
      "1.0.2",
      "--file",
      appApk,
      "--test-file",
      "missing-androidTest.apk",
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--test-file missing-androidTest.apk: no such file");
    expect(run.responses).toEqual([]);
    expect(await admin.versions.exists(app, "1.0.2")).toBe(false);
  });

  it("takes the server's 409 for the same file, stored meanwhile by another upload, as success", async () => {
    await admin.versions.upload({ packageName: app, version: "1.0.3", file: appApk });
    // Another job stores the same test package between this upload's look and its PUT.
    const racing: FetchLike = async (input, init) => {
      if (init.method === "PUT" && input.endsWith(testPackagePath("1.0.3")))
        await admin.versions.uploadTestPackage(app, "1.0.3", testApk);
      return fetch(input, init);
    };
    const run = await cli(
      ["upload", "--app", app, "--version", "1.0.3", "--file", appApk, "--test-file", testApk],
      racing,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(calls(run)).toEqual([
      `HEAD ${versionPath("1.0.3")} 200`,
      `GET ${versionPath("1.0.3")} 200`,
      `GET ${testPackagePath("1.0.3")} 404`,
      "GET /me 200",
      `PUT ${testPackagePath("1.0.3")} 409`,
      `GET ${testPackagePath("1.0.3")} 200`,
    ]);
    expect(run.stderr).toContain(
      `The test package of ${app} 1.0.3 was stored meanwhile, the same file (same sha256): nothing more to do.`,
    );
  });
});

describe("testbay run --test-file", () => {
  it("uploads the build, then the test package, then triggers", async () => {
    const plan = await admin.testPlans.create({
      name: "instrumented",
      package_name: app,
      steps: [{ type: "inspect", expect: { debuggable: false } }],
    });
    const run = await cli([
      "run",
      "--app",
      app,
      "--version",
      "2.0.0",
      "--file",
      appApk,
      "--test-file",
      testApk,
      "--plan",
      plan.id,
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(calls(run)).toEqual([
      `HEAD ${versionPath("2.0.0")} 404`,
      "GET /me 200",
      `PUT ${versionPath("2.0.0")} 201`,
      `GET ${testPackagePath("2.0.0")} 404`,
      `PUT ${testPackagePath("2.0.0")} 201`,
      "POST /testplan/run/batch 200",
    ]);
    const out = JSON.parse(run.stdout);
    expect(out.upload.outcome).toBe("uploaded");
    expect(out.test_package_upload).toMatchObject({
      outcome: "uploaded",
      test_package: { sha256: await sha256(testApk) },
    });
    expect(out.executions).toHaveLength(1);
  });

  it("stops with exit 4 before the trigger when the version is not registered and no --file is given", async () => {
    const run = await cli([
      "run",
      "--app",
      app,
      "--version",
      "3.0.0",
      "--test-file",
      testApk,
      "--plan",
      "tp_any",
    ]);
    expect(run.code, run.stderr).toBe(4);
    expect(calls(run)).toEqual([`GET ${testPackagePath("3.0.0")} 404`]);
    expect(run.stderr).toContain("error: app_version_not_found");
    expect(run.stderr).toContain("testbay upload --app com.example.basic --version 3.0.0 --file PATH");
    expect(run.stderr).not.toMatch(/A 404 means/);
  });

  it("refuses a missing test file with exit 2 before any request", async () => {
    const run = await cli([
      "run",
      "--app",
      app,
      "--version",
      "2.0.1",
      "--file",
      appApk,
      "--test-file",
      "missing-androidTest.apk",
      "--plan",
      "tp_any",
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--test-file missing-androidTest.apk: no such file");
    expect(run.responses).toEqual([]);
  });
});
