// CLIENT.md rules 10–12 against a real server with a small upload limit: an upload refused from its headers is
// shown as that refusal after one attempt, a different build under a registered version is an error, and fix
// texts name the CLI command with the real names.
import { createHash } from "node:crypto";
import { copyFile, mkdtemp, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../../server/test/harness.ts";
import { type CliRun, inProcessCli, sleepMovesClock } from "../../test/in-process-cli.ts";
import { Testbay } from "../sdk/client.ts";

const fixture = fileURLToPath(
  new URL("../../../server/test/fixtures/binaries/app-basic.apk", import.meta.url),
);
const app = "com.example.basic";
/** Small, so that a file over it is quick to make; big enough for the fixture. */
const limit = 1024 * 1024;

let server: TestServer;
let dir: string;
let ci: { client_id: string; client_secret: string };
let admin: Testbay;

const runCli = inProcessCli(() => ({ server, credentials: ci, cwd: dir }));
const cli = (argv: string[], env: Record<string, string> = {}) => runCli(argv, { env });

const puts = (run: CliRun) => run.responses.filter((r) => r.method === "PUT");
const sha256 = async (file: string) =>
  createHash("sha256")
    .update(await readFile(file))
    .digest("hex");

beforeAll(async () => {
  server = await startTestServer({ env: { TESTBAY_MAX_UPLOAD_BYTES: String(limit) } });
  dir = await mkdtemp(path.join(tmpdir(), "testbay-upload-rules-"));
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
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("uploads refused from their headers (rules 11 and 12)", () => {
  it("refuses a file over the limit with the 413's fix, after one attempt at most and no byte of it read", async () => {
    const big = path.join(dir, "big.apk");
    await writeFile(big, "");
    await truncate(big, 24 * 1024 * 1024);

    const run = await cli(["upload", "--app", app, "--version", "9.0.0", "--file", big, "--json"]);

    expect(run.code, run.stderr).toBe(4);
    expect(run.stderr).toMatch(/file_size_exceeded/);
    expect(run.stderr).toMatch(/fix: Make the binary smaller: strip debug symbols/);
    // Refused before the transfer: by the client from GET /me's limit, or by the server from Content-Length.
    expect(puts(run).length).toBeLessThanOrEqual(1);
    expect(run.stderr).not.toMatch(/Uploading|retrying|reachable/);
    expect(JSON.parse(run.stdout)).toMatchObject({
      error: { status: 413, code: "file_size_exceeded" },
      exit_code: 4,
    });
    await expect(admin.versions.exists(app, "9.0.0")).resolves.toBe(false);
  });

  it("shows an unknown app's 404 after one attempt, with the command that creates the app", async () => {
    const file = path.join(dir, "unknown-app.apk");
    await writeFile(file, "");
    await truncate(file, limit - 1);

    const run = await cli(["upload", "--app", "com.example.unknown", "--version", "1.0.0", "--file", file]);

    expect(run.code, run.stderr).toBe(4);
    expect(run.stderr).toMatch(/app_not_found.*404 on PUT \/apps\/com\.example\.unknown\/versions\/1\.0\.0/);
    expect(run.stderr).toMatch(/testbay apps create --app com\.example\.unknown --platform android/);
    expect(puts(run)).toHaveLength(1);
    expect(run.stderr).not.toMatch(/retrying|reachable|Uploading/);
  });

  it("names the upload command with the real names when a trigger meets an unregistered version", async () => {
    const plan = await admin.testPlans.create({
      name: "inspect",
      package_name: app,
      steps: [{ type: "inspect", expect: { debuggable: false } }],
    });
    const run = await cli(["trigger", "--app", app, "--version", "7.7.7", "--plan", plan.id]);
    expect(run.code, run.stderr).toBe(4);
    expect(run.stderr).toMatch(/app_version_not_found/);
    expect(run.stderr).toMatch(/testbay upload --app com\.example\.basic --version 7\.7\.7 --file PATH/);
  });
});

describe("a registered version (rule 10)", () => {
  it("skips the same build and refuses another one with exit 4 naming both sha256 prefixes", async () => {
    const first = await cli(["upload", "--app", app, "--version", "2.0.0", "--file", fixture]);
    expect(first.code, first.stderr).toBe(0);

    const same = await cli(["upload", "--app", app, "--version", "2.0.0", "--file", fixture]);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stderr).toMatch(/registered already with this very build .*skipped the upload/);
    expect(puts(same)).toHaveLength(0);

    const rebuilt = path.join(dir, "rebuilt.apk");
    await copyFile(fixture, rebuilt);
    await writeFile(rebuilt, "another build", { flag: "a" });
    const other = await cli(["upload", "--app", app, "--version", "2.0.0", "--file", rebuilt]);

    expect(other.code, other.stderr).toBe(4);
    expect(other.stderr).toMatch(/Bump the version/);
    expect(other.stderr).toContain((await sha256(fixture)).slice(0, 12));
    expect(other.stderr).toContain((await sha256(rebuilt)).slice(0, 12));
    expect(other.stderr).toContain(`testbay upload --app ${app} --version NEW_VERSION --file ${rebuilt}`);
    expect(puts(other)).toHaveLength(0);
  });
});

describe("a trigger from a CI system", () => {
  it("carries the branch, commit, pull request and job URL from GitHub Actions, kept on the execution", async () => {
    await cli(["upload", "--app", app, "--version", "3.0.0", "--file", fixture]);
    const plan = await admin.testPlans.create({
      name: "from ci",
      package_name: app,
      steps: [{ type: "inspect", expect: { debuggable: false } }],
    });
    const run = await cli(["trigger", "--app", app, "--version", "3.0.0", "--plan", plan.id, "--json"], {
      GITHUB_ACTIONS: "true",
      GITHUB_REF: "refs/pull/42/merge",
      GITHUB_HEAD_REF: "feature/login",
      GITHUB_SHA: "3f786850e387550fdab836ed7e6dc881de23001b",
      GITHUB_SERVER_URL: "https://github.com",
      GITHUB_REPOSITORY: "acme/app",
      GITHUB_RUN_ID: "9876543210",
    });
    expect(run.code, run.stderr).toBe(0);
    const [triggered] = JSON.parse(run.stdout).executions;
    const stored = await admin.executions.get(triggered.id);
    expect(stored.ci).toEqual({
      provider: "github",
      branch: "feature/login",
      commit: "3f786850e387550fdab836ed7e6dc881de23001b",
      pull_request: "42",
      build_url: "https://github.com/acme/app/actions/runs/9876543210",
    });
  });
});
