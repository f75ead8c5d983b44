// `--extra-file NAME=PATH` on `testbay upload` and `testbay run` against a real Testbay server: version files
// (API.md §14) uploaded HEAD-first after the build, skipped when the version has the very file, refused when it
// has another under the name, and looked for before anything is sent.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../../server/test/harness.ts";
import { type CliRun, inProcessCli, sleepMovesClock } from "../../test/in-process-cli.ts";
import { Testbay } from "../sdk/client.ts";

const fixture = (name: string) =>
  fileURLToPath(new URL(`../../../server/test/fixtures/binaries/${name}`, import.meta.url));
const appApk = fixture("app-basic.apk");
const helperApk = fixture("app-other-package.apk");
const testApk = fixture("app-basic-androidTest.apk");
const app = "com.example.basic";

let server: TestServer;
let dir: string;
let ci: { client_id: string; client_secret: string };
let admin: Testbay;
let token: string;

// One token for the file's commands, as a pipeline shares one (the token endpoint is rate limited).
const cli = inProcessCli(() => ({ server, credentials: ci, cwd: dir, token }));

/** The calls a run made, as "METHOD path status", token call left out. */
const calls = (run: CliRun) =>
  run.responses.filter((r) => r.path !== "/oauth/token").map((r) => `${r.method} ${r.path} ${r.status}`);

const filePath = (version: string, name: string) => `/apps/${app}/versions/${version}/files/${name}`;

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(path.join(tmpdir(), "testbay-cli-extra-file-"));
  ci = await server.createClient("acme", "ci");
  admin = new Testbay({
    baseUrl: server.baseUrl,
    clientId: ci.client_id,
    clientSecret: ci.client_secret,
    audience: server.config.audience,
    clock: sleepMovesClock(server.clock),
  });
  token = await admin.accessToken();
  await admin.apps.create({ package_name: app, platform: "android" });
  await writeFile(path.join(dir, "users.json"), '{"users": ["ada", "grace"]}\n');
  await writeFile(path.join(dir, "users-v2.json"), '{"users": ["ada", "grace", "katherine"]}\n');
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("testbay upload --extra-file", () => {
  it("uploads each file after the build, HEAD first, and the version lists them", async () => {
    const run = await cli([
      "upload",
      "--app",
      app,
      "--version",
      "1.0.0",
      "--file",
      appApk,
      "--extra-file",
      "users.json=users.json",
      "--extra-file",
      `helper.apk=${helperApk}`,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(calls(run).filter((call) => call.includes("/files/"))).toEqual([
      `HEAD ${filePath("1.0.0", "users.json")} 404`,
      `PUT ${filePath("1.0.0", "users.json")} 201`,
      `HEAD ${filePath("1.0.0", "helper.apk")} 404`,
      `PUT ${filePath("1.0.0", "helper.apk")} 201`,
    ]);
    expect(run.stderr).toContain("Uploaded the file users.json of com.example.basic 1.0.0: ");
    const files = await admin.versionFiles.list(app, "1.0.0");
    expect(files.map((file) => file.name).sort()).toEqual(["helper.apk", "users.json"]);
  });

  it("skips a file the version has already, byte for byte", async () => {
    const run = await cli([
      "upload",
      "--app",
      app,
      "--version",
      "1.0.0",
      "--file",
      appApk,
      "--extra-file",
      "users.json=users.json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(calls(run).filter((call) => call.includes("/files/"))).toEqual([
      `HEAD ${filePath("1.0.0", "users.json")} 200`,
    ]);
    expect(run.stderr).toContain(
      "The file users.json of com.example.basic 1.0.0 is uploaded already, the same file (sha256 ",
    );
  });

  it("refuses another file under a taken name, saying what to do (exit 4)", async () => {
    const run = await cli([
      "upload",
      "--app",
      app,
      "--version",
      "1.0.0",
      "--file",
      appApk,
      "--extra-file",
      "users.json=users-v2.json",
    ]);
    expect(run.code).toBe(4);
    expect(calls(run).some((call) => call.startsWith("PUT") && call.includes("/files/"))).toBe(false);
    expect(run.stderr).toContain("has another file named users.json");
    expect(run.stderr).toContain("--extra-file users.json=");
  });

  it("looks for every file before anything is sent", async () => {
    const run = await cli([
      "upload",
      "--app",
      app,
      "--version",
      "2.0.0",
      "--file",
      appApk,
      "--extra-file",
      "users.json=users.json",
      "--extra-file",
      "data.bin=missing/data.bin",
    ]);
    expect(run.code).toBe(2);
    expect(run.responses).toEqual([]);
    expect(run.stderr).toBe(
      `error: --extra-file data.bin=missing/data.bin: no such file (looked for ${path.join(dir, "missing/data.bin")}). Nothing was sent.\n`,
    );
  });

  it("refuses a malformed value with the form to write", async () => {
    const run = await cli([
      "upload",
      "--app",
      app,
      "--version",
      "2.0.0",
      "--file",
      appApk,
      "--extra-file",
      "users.json",
    ]);
    expect(run.code).toBe(2);
    expect(run.responses).toEqual([]);
    expect(run.stderr).toContain("write NAME=PATH");
  });
});

describe("testbay run --extra-file", () => {
  it("uploads the files before the trigger, so a plan that installs them starts", async () => {
    const plan = await admin.testPlans.create({
      name: "with helper",
      package_name: app,
      steps: [{ type: "instrumentation", additional_apks: ["helper.apk"] }],
    } as Parameters<Testbay["testPlans"]["create"]>[0]);
    const run = await cli([
      "run",
      "--app",
      app,
      "--version",
      "3.0.0",
      "--file",
      appApk,
      "--test-file",
      testApk,
      "--plan",
      plan.id,
      "--extra-file",
      `helper.apk=${helperApk}`,
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    const order = calls(run).map((call) => call.split(" ").slice(0, 2).join(" "));
    expect(order.indexOf(`PUT ${filePath("3.0.0", "helper.apk")}`)).toBeLessThan(
      order.indexOf("POST /testplan/run/batch"),
    );
    expect(JSON.parse(run.stdout).extra_files).toEqual([
      expect.objectContaining({ name: "helper.apk", outcome: "uploaded" }),
    ]);
  });

  it("without the file, the trigger's refusal names the option that uploads it", async () => {
    const [plan] = (await admin.testPlans.list({ package_name: app })).items.filter(
      (p) => p.name === "with helper",
    );
    const run = await cli([
      "run",
      "--app",
      app,
      "--version",
      "4.0.0",
      "--file",
      appApk,
      "--test-file",
      testApk,
      "--plan",
      plan?.id ?? "",
    ]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("version_file_not_found");
    expect(run.stderr).toContain("--extra-file helper.apk=");
  });
});
