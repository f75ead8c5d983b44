// A rolling restart of the scaled set (issue 30, API.md §15; CLIENT.md rule 13): two API instances on one
// PostgreSQL database, Redis and S3, behind a balancer that passes over an instance that refuses connections
// (test/round-robin-proxy.ts). Each instance in turn is closed as SIGTERM closes it (main.ts: no new requests,
// those in flight finished) and started again on its port, while a real `testbay-agent` runs a shell step and
// a `testbay run --wait` follows it: no run, agent job or CI wait is lost, and a run triggered while an instance
// is down is taken too. The shell steps wait for a file the test writes, so each restart happens mid-run.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startAgentProcess, stopAgentProcesses, waitFor } from "../../agent/test/agent-process.ts";
import { call, registerBasicApp, startTestServer, type TestServer } from "../test/harness.ts";
import type { IssuedCredentials } from "./features/clients/index.ts";

const cliBin = fileURLToPath(new URL("../../client/bin/testbay.js", import.meta.url));

let server: TestServer;
let scratch: string;
let ci: IssuedCredentials;
let headers: Record<string, string>;
const running: ChildProcess[] = [];
const restarted: TestServer[] = [];

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  scratch = await mkdtemp(path.join(tmpdir(), "testbay-rolling-"));
  ci = await server.createClient("acme", "ci");
  headers = { "x-api-key": await server.token(ci) };
  await registerBasicApp(server, headers, "1.0.0");
});

afterAll(async () => {
  await stopAgentProcesses(running);
  for (const instance of restarted) await instance.close();
  await server?.close();
  await rm(scratch, { recursive: true, force: true });
});

/** Instance `index` as it runs now: the first one started, or its restart. */
const instance = (index: number) => (restarted[index] ?? server.instances[index]) as TestServer;

/** Closes instance `index` as its SIGTERM handler does (main.ts): no new connections, those in flight answered. */
const stop = (index: number) => instance(index).app.close();

/** Starts instance `index` again on its port, database and stores, as after a deploy. */
async function start(index: number): Promise<void> {
  const { storageUrl, redisUrl, port } = { ...instance(index).config, port: instance(index).origin };
  restarted[index] = await startTestServer({
    shareWith: server,
    clock: server.clock,
    port: Number(new URL(port).port),
    env: {
      TESTBAY_STORAGE_URL: storageUrl,
      ...(redisUrl ? { TESTBAY_REDIS_URL: redisUrl } : {}),
      TESTBAY_RATE_LIMIT_BURST: "100000",
      TESTBAY_AGENT_RATE_LIMIT_BURST: "100000",
    },
  });
}

/** A shell step that runs until `file` exists (bounded: 60 s), so the test decides when the run ends. */
function waitsFor(file: string) {
  return `i=0; while [ ! -f '${file}' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; test -f '${file}' && echo "released by ${path.basename(file)}"`;
}

async function createPlan(name: string, file: string): Promise<string> {
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers,
    json: { name, package_name: "com.example.basic", steps: [{ type: "shell", run: waitsFor(file) }] },
  });
  expect(plan.status, JSON.stringify(plan.body)).toBe(201);
  return plan.body.id;
}

/**
 * A call as a client that survives restarts makes it (CLIENT.md rule 13): a kept-alive connection to the
 * instance that is closing may be cut under a request, which is then sent again on a new one (the trigger with
 * an Idempotency-Key, so that a resend cannot start a second run).
 */
async function resilientCall(url: string, init: Parameters<typeof call>[1] = {}) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call(url, init);
    } catch (error) {
      if (attempt >= 5 || !(error instanceof TypeError)) throw error;
    }
  }
}

const execution = async (id: string) =>
  (await resilientCall(`${server.baseUrl}/executions/${id}`, { headers })).body;

const runningNow = (id: string) =>
  waitFor(`execution ${id} to run`, async () => (await execution(id)).status === "running");

it("restarting each instance in turn loses no run, agent job or CI wait", async () => {
  const first = path.join(scratch, "first.go");
  const second = path.join(scratch, "second.go");
  await createPlan("first", first);
  const secondPlan = await createPlan("second", second);

  const agent = startAgentProcess({
    name: "rack",
    baseUrl: server.baseUrl,
    audience: server.config.audience,
    credentials: await server.createClient("acme", "agent"),
    scratch,
    args: ["--devices", "none", "--allow-shell", "--concurrency", "2"],
    running,
  });

  // The CI job: testbay run --wait, through the balancer.
  const cli = spawn(
    process.execPath,
    [cliBin, "run", "--app", "com.example.basic", "--version", "1.0.0", "--plan", "first", "--wait"],
    {
      cwd: scratch,
      env: {
        ...process.env,
        TESTBAY_URL: server.baseUrl,
        TESTBAY_CLIENT_ID: ci.client_id,
        TESTBAY_CLIENT_SECRET: ci.client_secret,
        TESTBAY_AUDIENCE: server.config.audience,
        CI: "true",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  running.push(cli);
  let said = "";
  cli.stdout?.on("data", (chunk: Buffer) => {
    said += chunk;
  });
  cli.stderr?.on("data", (chunk: Buffer) => {
    said += chunk;
  });
  const cliExit = new Promise<number | null>((resolve) => cli.once("exit", (code) => resolve(code)));

  const firstId = await waitFor("the CLI's execution", async () => {
    const listed = await resilientCall(`${server.baseUrl}/executions?package_name=com.example.basic`, {
      headers,
    });
    return listed.body.items?.[0]?.id as string | undefined;
  });
  await runningNow(firstId);

  // Instance 1 goes down and comes back while the first run runs; a second run is triggered while it is down.
  await stop(0);
  const triggered = await resilientCall(`${server.baseUrl}/testplan/run`, {
    headers: { ...headers, "idempotency-key": "second-run" },
    json: { test_plan_id: secondPlan, package_name: "com.example.basic", version: "1.0.0" },
  });
  expect(triggered.status, JSON.stringify(triggered.body)).toBe(200);
  const secondId = triggered.body.execution.id as string;
  await start(0);
  await runningNow(secondId);

  // Then instance 2, while both runs go on; the first run ends while it is down.
  await stop(1);
  await writeFile(first, "");
  await start(1);
  await writeFile(second, "");

  expect(await cliExit, said).toBe(0);
  expect(said).not.toMatch(/gave up/);
  for (const id of [firstId, secondId]) {
    const view = await waitFor(`execution ${id} to finish`, async () => {
      const e = await execution(id);
      return !["queued", "running"].includes(e.status) && e;
    });
    expect(view.status, `${id}: ${JSON.stringify(view)}\nagent:\n${agent.output()}`).toBe("passed");
    // One attempt each: no lease lapsed, nothing was run twice.
    expect(view.devices.map((d: { attempt: number }) => d.attempt)).toEqual([1]);
    const log = (await resilientCall(`${server.baseUrl}/executions/${id}/log`, { headers })).body as string;
    expect(log).toContain(`released by ${id === firstId ? "first.go" : "second.go"}`);
  }
});
