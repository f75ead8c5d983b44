// The CLI and the SDK against a real Testbay server (sqlite and postgres projects). The CLI runs in-process
// through main(argv, io); its clock is the server's ManualClock and its sleeps move that clock, so waits,
// rate-limit refills and --timeout take no real time.
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../../server/test/harness.ts";
import {
  type CliRun,
  countCalls as count,
  inProcessCli,
  sleepMovesClock,
} from "../../test/in-process-cli.ts";
import { Testbay } from "../sdk/client.ts";
import type { ResponseEvent } from "../sdk/transport.ts";

const fixture = fileURLToPath(
  new URL("../../../server/test/fixtures/binaries/app-basic.apk", import.meta.url),
);
const app = "com.example.basic";
const inspect = { type: "inspect" as const, expect: { debuggable: false } };

let server: TestServer;
let dir: string;
let ci: { client_id: string; client_secret: string };
/** The test's own SDK client (another ci client of the same organization: its own rate-limit bucket). */
let admin: Testbay;
/** Runs during every sleep of the CLI: tests use it to act while the CLI waits. */
let duringSleep: (() => Promise<void>) | undefined;

const runCli = inProcessCli(() => ({
  server,
  credentials: ci,
  cwd: dir,
  duringSleep: () => duringSleep?.(),
}));
const cli = (argv: string[], env: Record<string, string> = {}, credentials = ci) =>
  runCli(argv, { env, credentials });
const serverClock = () => sleepMovesClock(server.clock);

async function createPlans(n: number, packageName = app): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    ids.push(
      (await admin.testPlans.create({ name: `plan ${i}`, package_name: packageName, steps: [inspect] })).id,
    );
  }
  return ids;
}

/** Cancels every queued execution of a version, as a person would from the dashboard. */
async function cancelQueued(version: string): Promise<number> {
  let cancelled = 0;
  for await (const execution of admin.executions.all({
    package_name: app,
    version,
    status: "queued",
    limit: 200,
  })) {
    await admin.executions.cancel(execution.id);
    cancelled += 1;
  }
  return cancelled;
}

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(path.join(tmpdir(), "testbay-cli-int-"));
  ci = await server.createClient("acme", "ci");
  const setup = await server.createClient("acme", "ci");
  admin = new Testbay({
    baseUrl: server.baseUrl,
    clientId: setup.client_id,
    clientSecret: setup.client_secret,
    audience: server.config.audience,
    clock: serverClock(),
  });
  await admin.apps.create({ package_name: app, platform: "android" });
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("testbay against a real server", () => {
  let plans: string[];

  it("uploads a build, and a second upload of the version skips the transfer and says so", async () => {
    const first = await cli(["upload", "--app", app, "--version", "1.2.3", "--file", fixture]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/Uploaded com\.example\.basic 1\.2\.3: [\d.]+ KiB, sha256 [0-9a-f]{64}/);
    expect(count(first, "HEAD", "/apps/com.example.basic/versions/1.2.3")).toBe(1);
    expect(count(first, "PUT", "/apps/com.example.basic/versions/1.2.3")).toBe(1);
    const registered = await admin.versions.get(app, "1.2.3");
    const local = createHash("sha256")
      .update(await readFile(fixture))
      .digest("hex");
    expect(registered.sha256).toBe(local);
    expect(registered.binary.package_name).toBe(app);

    const second = await cli(["upload", "--app", app, "--version", "1.2.3", "--file", fixture, "--json"]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(
      /registered already with this very build \(sha256 [0-9a-f]{12}…\): skipped the upload/,
    );
    expect(count(second, "PUT", /versions/)).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ outcome: "skipped", exit_code: 0 });
  });

  it("triggers two active plans in one batch call and exits 0; --json parses", async () => {
    plans = await createPlans(2);
    const run = await cli([
      "trigger",
      "--app",
      app,
      "--version",
      "1.2.3",
      "--plan",
      plans[0] ?? "",
      "--plan",
      plans[1] ?? "",
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(count(run, "POST", "/testplan/run/batch")).toBe(1);
    expect(count(run, "POST", "/oauth/token")).toBe(1);
    const out = JSON.parse(run.stdout);
    expect(out.exit_code).toBe(0);
    expect(out.failed_executions).toEqual([]);
    expect(out.executions.map((e: { test_plan_id: string }) => e.test_plan_id)).toEqual(plans);
    expect(out.executions.every((e: { status: string }) => e.status === "queued")).toBe(true);
  });

  it("exits 3 for a batch with an archived plan, naming it with its code, reason and fix", async () => {
    const [archived] = await createPlans(1);
    await admin.testPlans.archive(archived ?? "");
    const run = await cli([
      "trigger",
      "--app",
      app,
      "--version",
      "1.2.3",
      "--plan",
      `${plans[0]},${archived}`,
    ]);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain("1 of 2 test plans did not start");
    expect(run.stderr).toContain(
      `${archived}: test_plan_not_found (archived), 404: Test plan ${archived} is archived.`,
    );
    expect(run.stderr).toContain(
      `fix: Restore it with POST /v1/testplans/${archived}/restore, or create a new plan.`,
    );
    expect(run.stderr).toContain(`with this CLI: testbay plans restore ${archived}`);
    expect(run.stderr).not.toMatch(/A 404 means/);
    expect(run.stdout).toContain(plans[0]);
  });

  it("exits 4 for an unregistered version, with the server's fix, and does not call it an outage", async () => {
    const run = await cli(["trigger", "--app", app, "--version", "9.9.9", "--plan", plans[0] ?? ""]);
    expect(run.code, run.stderr).toBe(4);
    expect(run.stderr).toMatch(/app_version_not_found/);
    expect(run.stderr).toMatch(/fix: .*testbay upload --app com\.example\.basic --version 9\.9\.9/);
    // Precise already: no generic word on what a 404 means (CLIENT.md rule 14).
    expect(run.stderr).not.toMatch(/A 404 means/);
    expect(count(run, "POST", "/testplan/run/batch")).toBe(1);
  });

  it("gives up with exit 5 when --timeout passes while the executions stay queued", async () => {
    const run = await cli([
      "run",
      "--app",
      app,
      "--version",
      "1.2.3",
      "--plan",
      plans.join(","),
      "--wait",
      "--timeout",
      "30s",
    ]);
    expect(run.code, run.stderr).toBe(5);
    expect(run.stderr).toMatch(/gave up waiting after 30s: 2 executions still 2 queued/);
    expect(run.stdout).toMatch(/queued/);
    // One list call per poll, never one call per execution.
    expect(count(run, "GET", /^\/executions\/ex_/)).toBe(0);
    expect(count(run, "GET", "/executions")).toBeGreaterThanOrEqual(4);
    await cancelQueued("1.2.3");
  });

  it("exits 1 with a summary table and a JUnit report when the executions end cancelled", async () => {
    duringSleep = async () => void (await cancelQueued("1.2.3"));
    try {
      const run = await cli([
        "run",
        "--app",
        app,
        "--version",
        "1.2.3",
        "--file",
        fixture,
        "--plan",
        plans.join(","),
        "--wait",
        "--junit",
        "report.xml",
      ]);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toMatch(/skipped the upload/);
      expect(run.stdout).toMatch(/EXECUTION\s+PLAN\s+STATUS\s+TESTS/);
      const [tableBlock, report] = run.stdout.split("\n\n");
      const rows = (tableBlock ?? "").trim().split("\n").slice(1);
      expect(report).toMatch(
        /^On the dashboard:\n {2}ex_\w+ {2}cancelled {2}http:\/\/127\.0\.0\.1:\d+\/runs\/ex_/,
      );
      expect(rows).toHaveLength(2);
      for (const [i, row] of rows.entries())
        expect(row).toMatch(new RegExp(`^ex_\\w+\\s+plan ${i} \\(${plans[i]}\\)\\s+cancelled`));
      expect(run.stderr).toMatch(/Not all passed: 2 cancelled/);
      const junit = await readFile(path.join(dir, "report.xml"), "utf8");
      expect(junit).toContain('<testsuites name="testbay" tests="2" failures="0" errors="2">');
      expect(junit.match(/<error type="cancelled"/g)).toHaveLength(2);

      const ids = [...run.stdout.matchAll(/^(ex_\w+)/gm)].map((m) => m[1] ?? "");
      const status = await cli(["status", ...ids, "--json"]);
      expect(status.code).toBe(1);
      expect(JSON.parse(status.stdout).executions.map((e: { status: string }) => e.status)).toEqual([
        "cancelled",
        "cancelled",
      ]);
    } finally {
      duringSleep = undefined;
    }
  });

  it("lists plans, and a token from `testbay token` makes later commands call the token endpoint zero times", async () => {
    const list = await cli(["plans", "list", "--app", app, "--json"]);
    expect(list.code).toBe(0);
    const listed = JSON.parse(list.stdout).items.map((p: { id: string }) => p.id);
    expect(listed).toEqual(expect.arrayContaining(plans));

    const token = await cli(["token"]);
    expect(token.code).toBe(0);
    expect(count(token, "POST", "/oauth/token")).toBe(1);
    const run = await cli(["plans", "list"], {
      TESTBAY_TOKEN: token.stdout.trim(),
      TESTBAY_CLIENT_SECRET: "",
    });
    expect(run.code, run.stderr).toBe(0);
    expect(count(run, "POST", "/oauth/token")).toBe(0);
    expect(run.stdout).toMatch(/ID\s+NAME\s+PACKAGE\s+STATE/);
  });
});

describe("pacing: the CLI does not provoke 429 on its own", () => {
  it("waits for 30 executions under the default 20/4 limit without one 429, while unpaced calls meet it", async () => {
    const pacer = await server.createClient("acme", "ci");
    const ids = await createPlans(30);
    await admin.versions.upload({ packageName: app, version: "2.0.0", file: fixture });
    duringSleep = async () => void (await cancelQueued("2.0.0"));
    let run: CliRun;
    try {
      run = await cli(
        ["run", "--app", app, "--version", "2.0.0", "--plan", ids.join(","), "--wait", "--json"],
        {},
        pacer,
      );
    } finally {
      duringSleep = undefined;
    }
    expect(run.code, run.stderr).toBe(1);
    expect(JSON.parse(run.stdout).executions).toHaveLength(30);
    expect(run.responses.filter((r) => r.status === 429)).toEqual([]);

    // 30 executions read one by one: 31 calls (token included), more than the burst of 20, all paced.
    const executionIds = JSON.parse(run.stdout).executions.map((e: { id: string }) => e.id);
    const status = await cli(["status", ...executionIds], {}, pacer);
    expect(status.code).toBe(1);
    expect(count(status, "GET", /^\/executions\/ex_/)).toBe(30);
    expect(status.responses.filter((r) => r.status === 429)).toEqual([]);
    const clientLogs = server.logs.filter((line) => line.includes(pacer.client_id));
    expect(clientLogs.length).toBeGreaterThan(0);
    expect(clientLogs.filter((line) => line.includes('"statusCode":429'))).toEqual([]);

    // The control: the same reads without pacing meet the server's limit.
    const unpacedResponses: ResponseEvent[] = [];
    const unpacedClient = await server.createClient("acme", "ci");
    const unpaced = new Testbay({
      baseUrl: server.baseUrl,
      clientId: unpacedClient.client_id,
      clientSecret: unpacedClient.client_secret,
      clock: serverClock(),
      pacing: false,
      onResponse: (event) => unpacedResponses.push(event),
    });
    for (const id of executionIds) await unpaced.executions.get(id);
    expect(unpacedResponses.filter((r) => r.status === 429).length).toBeGreaterThan(0);
  });
});
