// The test package upload's decisions (HEAD-first by GET, skip, refuse, 409 judged by sha256, retries) against
// a scripted server, and the CLI's refusals of a missing --test-file before any request.
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Captured, problem, ScriptedServer } from "../../test/scripted-server.ts";
import { main } from "../cli/main.ts";
import { Testbay } from "./client.ts";
import { FakeClock, seededRandom } from "./clock.ts";
import { TestbayApiError } from "./errors.ts";
import type { TestPackage } from "./models.ts";
import { compareTestPackage, differentTestPackageError } from "./upload.ts";

const pkg = "com.example.basic";
const testPath = `/apps/${pkg}/versions/1.2.3/test-package`;
const testBytes = Buffer.alloc(120_000, 3);
const testSha = createHash("sha256").update(testBytes).digest("hex");
const otherSha = "ab".repeat(32);

let dir: string;
let testApk: string;
let server: ScriptedServer;

const stored = (sha256: string, size = testBytes.length): TestPackage => ({
  package_name: pkg,
  version: "1.2.3",
  format: "apk",
  size_bytes: size,
  sha256,
  created_at: "2026-01-01T00:00:00.000Z",
  test: {
    package_name: `${pkg}.test`,
    runner: "androidx.test.runner.AndroidJUnitRunner",
    target_package: pkg,
    min_sdk: 24,
    target_sdk: 34,
  },
});

const noTestPackage = problem(404, "test_package_not_found");

function sdk(): Testbay {
  return new Testbay({
    baseUrl: server.baseUrl,
    clientId: "cl_ci",
    clientSecret: "secret",
    clock: new FakeClock(),
    random: seededRandom(7),
  });
}

async function refusal(promise: Promise<unknown>): Promise<TestbayApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TestbayApiError);
  return error as TestbayApiError;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "testbay-test-package-"));
  testApk = path.join(dir, "app-debug-androidTest.apk");
  await writeFile(testApk, testBytes);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

beforeEach(async () => {
  server = new ScriptedServer();
  await server.start();
});
afterEach(() => server.close());

describe("compareTestPackage", () => {
  it("is absent without a stored package, same for an equal sha256 in any case, different otherwise", () => {
    expect(compareTestPackage(null, testSha)).toBe("absent");
    expect(compareTestPackage(stored(testSha.toUpperCase()), testSha)).toBe("same");
    expect(compareTestPackage(stored(otherSha), testSha)).toBe("different");
  });
});

describe("differentTestPackageError", () => {
  it("is a 409 test_package_exists naming both sha256 prefixes and saying to bump the version", () => {
    const error = differentTestPackageError({
      packageName: pkg,
      version: "1.2.3",
      file: "tests.apk",
      stored: stored(otherSha, 500),
      localSha256: testSha,
      localBytes: 600,
      problem: { request_id: "req-9", code: "test_package_exists" },
    });
    expect(error.status).toBe(409);
    expect(error.code).toBe("test_package_exists");
    expect(error.reason).toBe("different_test_package");
    expect(error.detail).toContain(`sha256 ${otherSha.slice(0, 12)}…, 500 bytes`);
    expect(error.detail).toContain(`tests.apk (sha256 ${testSha.slice(0, 12)}…, 600 bytes)`);
    expect(error.fix).toMatch(/^Bump the version: /);
    expect(error.fix).toContain(`testbay upload --app ${pkg} --version NEW_VERSION`);
    expect(error.request_id).toBe("req-9");
  });
});

describe("versions.uploadTestPackage", () => {
  it("looks first, then streams the file once with its length when the version has no test package", async () => {
    server.script(`GET ${testPath}`, noTestPackage).script(`PUT ${testPath}`, {
      status: 201,
      body: stored(testSha),
    });
    const progress: number[] = [];
    const result = await sdk().versions.uploadTestPackage(pkg, "1.2.3", testApk, {
      onProgress: (p) => progress.push(p.sentBytes),
    });
    expect(result.outcome).toBe("uploaded");
    expect(result.testPackage.sha256).toBe(testSha);
    const [put] = server.requests(`PUT ${testPath}`);
    expect(put?.bodySha256).toBe(testSha);
    expect(put?.headers["content-length"]).toBe(String(testBytes.length));
    expect(progress.at(-1)).toBe(testBytes.length);
    expect(server.received.map((r) => r.method)).toEqual(["POST", "GET", "GET", "PUT"]);
  });

  it("skips the transfer when the stored test package is this file", async () => {
    server.script(`GET ${testPath}`, { status: 200, body: stored(testSha) });
    const result = await sdk().versions.uploadTestPackage(pkg, "1.2.3", testApk);
    expect(result).toMatchObject({ outcome: "skipped", sizeBytes: testBytes.length });
    expect(server.count(`PUT ${testPath}`)).toBe(0);
  });

  it("refuses another file before sending any of it", async () => {
    server.script(`GET ${testPath}`, { status: 200, body: stored(otherSha) });
    const error = await refusal(sdk().versions.uploadTestPackage(pkg, "1.2.3", testApk));
    expect(error.reason).toBe("different_test_package");
    expect(error.fix).toMatch(/Bump the version/);
    expect(server.count(`PUT ${testPath}`)).toBe(0);
  });

  it("turns the server's 409 test_package_exists into the same refusal when the stored file differs", async () => {
    server
      .script(`GET ${testPath}`, noTestPackage, { status: 200, body: stored(otherSha) })
      .script(`PUT ${testPath}`, problem(409, "test_package_exists"));
    const error = await refusal(sdk().versions.uploadTestPackage(pkg, "1.2.3", testApk));
    expect(error.code).toBe("test_package_exists");
    expect(error.reason).toBe("different_test_package");
    expect(error.detail).toContain(otherSha.slice(0, 12));
    expect(error.detail).toContain(testSha.slice(0, 12));
    expect(error.request_id).toBe("req-1");
  });

  it("takes a 409 for a stored package equal to the file as an earlier attempt that landed", async () => {
    server
      .script(`GET ${testPath}`, noTestPackage, { status: 200, body: stored(testSha) })
      .script(`PUT ${testPath}`, problem(409, "test_package_exists"));
    const result = await sdk().versions.uploadTestPackage(pkg, "1.2.3", testApk);
    expect(result.outcome).toBe("already_landed");
    expect(server.count(`PUT ${testPath}`)).toBe(1);
  });

  it("asks before resending after a 502, and does not send the file again when the first attempt landed", async () => {
    server
      .script(`GET ${testPath}`, noTestPackage, { status: 200, body: stored(testSha) })
      .script(`PUT ${testPath}`, problem(502, "bad_gateway"));
    const result = await sdk().versions.uploadTestPackage(pkg, "1.2.3", testApk);
    expect(result.outcome).toBe("already_landed");
    expect(server.count(`PUT ${testPath}`)).toBe(1);
    expect(server.received.map((r) => r.method)).toEqual(["POST", "GET", "GET", "PUT", "GET", "GET"]);
  });

  it("resends after a 502 when the first attempt did not land", async () => {
    server
      .script(`GET ${testPath}`, noTestPackage)
      .script(`PUT ${testPath}`, problem(502, "bad_gateway"), { status: 201, body: stored(testSha) });
    const result = await sdk().versions.uploadTestPackage(pkg, "1.2.3", testApk);
    expect(result.outcome).toBe("uploaded");
    const puts = server.requests(`PUT ${testPath}`);
    expect(puts.map((p) => p.bodySha256)).toEqual([testSha, testSha]);
  });

  it("does not take an unknown version for a version without tests: its 404 is thrown, nothing is sent", async () => {
    server.script(`GET ${testPath}`, problem(404, "app_version_not_found"));
    const error = await refusal(sdk().versions.uploadTestPackage(pkg, "1.2.3", testApk));
    expect(error.code).toBe("app_version_not_found");
    expect(server.count(`PUT ${testPath}`)).toBe(0);
  });
});

describe("versions.testPackage", () => {
  it("is null for 404 test_package_not_found and the object for 200", async () => {
    server.script(`GET ${testPath}`, noTestPackage, { status: 200, body: stored(testSha) });
    const testbay = sdk();
    expect(await testbay.versions.testPackage(pkg, "1.2.3")).toBeNull();
    expect((await testbay.versions.testPackage(pkg, "1.2.3"))?.sha256).toBe(testSha);
  });
});

describe("testbay --test-file", () => {
  async function cli(argv: string[]) {
    const stdout = new Captured();
    const stderr = new Captured();
    const code = await main(argv, {
      env: { TESTBAY_URL: server.baseUrl, TESTBAY_CLIENT_ID: "cl_ci", TESTBAY_CLIENT_SECRET: "secret" },
      stdout,
      stderr,
      cwd: dir,
      clock: new FakeClock(),
      random: seededRandom(3),
    });
    return { code, stdout: stdout.text, stderr: stderr.text };
  }

  it("refuses a missing test file with exit 2 before any request, on upload and on run", async () => {
    const build = path.join(dir, "app.apk");
    await writeFile(build, Buffer.alloc(10, 1));
    const upload = await cli([
      "upload",
      "--app",
      pkg,
      "--version",
      "1",
      "--file",
      build,
      "--test-file",
      "no.apk",
    ]);
    expect(upload.code).toBe(2);
    expect(upload.stderr).toContain(
      `--test-file no.apk: no such file (looked for ${path.join(dir, "no.apk")})`,
    );
    const run = await cli(["run", "--app", pkg, "--version", "1", "--test-file", "no.apk", "--plan", "tp_1"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--test-file no.apk: no such file");
    expect(server.received).toEqual([]);
  });

  it("describes --test-file in the help of upload and run", async () => {
    for (const command of ["upload", "run"]) {
      const help = await cli([command, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/--test-file <path>\s+the test APK/);
    }
  });

  it("exits 4 with the bump-the-version message when the version has other tests", async () => {
    const versionPath = `/apps/${pkg}/versions/1.2.3`;
    server
      .script(`HEAD ${versionPath}`, {
        status: 200,
        // The build is registered already, the very same bytes: only the tests differ.
        headers: { etag: `"${createHash("sha256").update(Buffer.alloc(10, 1)).digest("hex")}"` },
      })
      .script(`GET ${testPath}`, { status: 200, body: stored(otherSha) });
    const build = path.join(dir, "app.apk");
    await writeFile(build, Buffer.alloc(10, 1));
    const run = await cli([
      "upload",
      "--app",
      pkg,
      "--version",
      "1.2.3",
      "--file",
      build,
      "--test-file",
      testApk,
    ]);
    expect(run.code).toBe(4);
    expect(run.stderr).toContain("error: test_package_exists (different_test_package), 409");
    expect(run.stderr).toContain(
      `fix: Bump the version: upload this build and these tests under a new version`,
    );
    expect(server.count(`PUT ${testPath}`)).toBe(0);
  });
});
