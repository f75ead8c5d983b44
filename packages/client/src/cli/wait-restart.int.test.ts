// CLIENT.md rule 13 against a real server: `testbay run --wait` and `testbay status --wait`, two CLI processes,
// follow a run while the server is stopped for 10 s and started again on the same port, database and data dir;
// both then exit with the run's real result. The CLIs run on real time (their own processes), so the outage is
// real time too; every other wait in this file awaits what the CLIs print or what the server answers.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as realTime } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../server/test/harness.ts";

const bin = fileURLToPath(new URL("../../bin/testbay.js", import.meta.url));
const outage = 10_000;

let server: TestServer;
const restarted: TestServer[] = [];
let dir: string;
let ci: Awaited<ReturnType<TestServer["createClient"]>>;
let agentToken: string;

/** A `testbay` process and what it has printed so far. */
interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once stderr matches `pattern` (rejects if the process ends first). */
  printed(pattern: RegExp): Promise<RegExpMatchArray>;
  exited: Promise<number>;
}

function testbay(args: string[]): CliProcess {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: dir,
    env: {
      ...process.env,
      TESTBAY_URL: server.baseUrl,
      TESTBAY_CLIENT_ID: ci.client_id,
      TESTBAY_CLIENT_SECRET: ci.client_secret,
      TESTBAY_AUDIENCE: server.config.audience,
      CI: "true",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk;
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    err += chunk;
  });
  const exited = new Promise<number>((resolve) => child.on("exit", (code) => resolve(code ?? -1)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    printed: (pattern) =>
      new Promise((resolve, reject) => {
        const look = () => {
          const match = err.match(pattern);
          if (!match) return;
          child.stderr?.off("data", look);
          resolve(match);
        };
        child.stderr?.on("data", look);
        exited.then((code) =>
          reject(new Error(`testbay exited ${code} before printing ${pattern}:\n${err}`)),
        );
        look();
      }),
  };
}

/** Stops every API instance behind the base URL (the port closes; the database and data dir stay). */
async function stopServer(): Promise<void> {
  for (const instance of server.instances) await instance.app.close();
}

/** Starts every instance again on its port, database, data dir and stores, as a restart after a deploy. */
async function startServerAgain(): Promise<void> {
  for (const instance of server.instances) {
    const { storageUrl, redisUrl } = instance.config;
    restarted.push(
      await startTestServer({
        shareWith: instance,
        clock: server.clock,
        port: Number(new URL(instance.origin).port),
        env: { TESTBAY_STORAGE_URL: storageUrl, ...(redisUrl ? { TESTBAY_REDIS_URL: redisUrl } : {}) },
      }),
    );
  }
}

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(path.join(tmpdir(), "testbay-wait-restart-"));
  ci = await server.createClient("acme", "ci");
  agentToken = await server.token(await server.createClient("acme", "agent"));
  await registerBasicApp(server, { "x-api-key": await server.token(ci) });
});

afterAll(async () => {
  for (const instance of restarted) await instance.close();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

it("run --wait and status --wait follow a run through a 10 s server outage and exit with its result", async () => {
  const headers = { "x-api-key": await server.token(ci) };
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers,
    json: {
      name: "checkout",
      package_name: "com.example.basic",
      steps: [{ type: "inspect", expect: { debuggable: false } }],
    },
  });
  expect(plan.status, JSON.stringify(plan.body)).toBe(201);

  const run = testbay([
    "run",
    "--app",
    "com.example.basic",
    "--version",
    "1.2.3",
    "--plan",
    "checkout",
    "--wait",
    "--timeout",
    "4m",
    "--junit",
    "run.xml",
  ]);
  // The live view's line in a CI log names the execution.
  const [, executionId = ""] = await run.printed(/^ {2}(ex_\w+) {2}checkout/m);
  const status = testbay(["status", executionId, "--wait", "--timeout", "4m", "--junit", "status.xml"]);
  await status.printed(/^ {2}ex_\w+ {2}checkout/m);

  await stopServer();
  await Promise.all(
    [run, status].map((cli) => cli.printed(/^Server not answering since \d\d:\d\d:\d\d UTC/m)),
  );
  // The outage itself is real time: the CLIs' retries go on meanwhile (nothing asserts on how long they took).
  await realTime(outage);
  await startServerAgain();

  // The run goes on after the restart: an agent takes it and one of its tests fails.
  const agent = { "x-api-key": agentToken };
  const claimed = await call(`${server.baseUrl}/agent/claim`, {
    headers: agent,
    json: { agent_id: "restart-host", devices: [], step_types: ["inspect"] },
  });
  expect(claimed.status).toBe(200);
  expect(claimed.body.job.execution_id).toBe(executionId);
  const lease = claimed.body.job.lease_id;
  const failure = {
    seq: 1,
    type: "test_case",
    step_index: 0,
    classname: "com.example.CartTest",
    name: "paysWithCard",
    status: "failed",
    message: "expected total 12.00 but was 0.00",
  };
  expect(
    (
      await call(`${server.baseUrl}/agent/jobs/${lease}/events`, {
        headers: agent,
        json: { events: [failure] },
      })
    ).status,
  ).toBe(200);
  const done = await call(`${server.baseUrl}/agent/jobs/${lease}/complete`, {
    headers: agent,
    json: { status: "failed", summary: { tests: 1, passed: 0, failed: 1, skipped: 0 } },
  });
  expect(done.status).toBe(200);

  const codes = await Promise.all([run.exited, status.exited]);
  expect(codes, `run:\n${run.stderr()}\nstatus:\n${status.stderr()}`).toEqual([1, 1]);
  for (const [cli, report] of [
    [run, "run.xml"],
    [status, "status.xml"],
  ] as const) {
    expect(cli.stderr().match(/^Server not answering since/gm)).toHaveLength(1);
    expect(
      cli.stderr().match(/^Server answers again \(not answering for \w+\); waiting goes on\.$/gm),
    ).toHaveLength(1);
    expect(cli.stderr()).not.toMatch(/gave up/);
    expect(cli.stderr()).toMatch(/Not all passed: 1 failed\./);
    expect(cli.stdout()).toMatch(
      new RegExp(`^${executionId}\\s+checkout \\(${plan.body.id}\\)\\s+failed`, "m"),
    );
    expect(cli.stdout()).toMatch(/✗ com\.example\.CartTest\.paysWithCard \(failed/);
    const junit = await readFile(path.join(dir, report), "utf8");
    expect(junit).toMatch(
      /<testcase classname="com\.example\.CartTest" name="paysWithCard"[^>]*>\s*<failure/,
    );
  }
}, 180_000);
