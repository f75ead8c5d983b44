import type { ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { type AgentProcess, startAgentProcess, stopAgentProcesses, waitFor } from "./agent-process.ts";

// End to end: real `testbay-agent` processes (bin/testbay-agent.js, as an operator starts them) against a
// real server on a port. The server's clock is a manual one, so lease expiry is made to happen by moving it.

const ttlSeconds = 5;

let server: TestServer;
let ci: Record<string, string>;
let agentCredentials: { client_id: string; client_secret: string };
let scratch: string;
const running: ChildProcess[] = [];

function startAgent(name: string, ...args: string[]): AgentProcess {
  return startAgentProcess({
    name,
    baseUrl: server.baseUrl,
    audience: server.config.audience,
    credentials: agentCredentials,
    scratch,
    args: ["--devices", "none", ...args],
    running,
  });
}

async function createPlan(steps: unknown[], extra: Record<string, unknown> = {}): Promise<string> {
  const response = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: { name: "e2e", package_name: "com.example.basic", steps, ...extra },
  });
  expect(response.status).toBe(201);
  return response.body.id;
}

async function trigger(planId: string, env: Record<string, string> = {}): Promise<string> {
  const response = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: planId, package_name: "com.example.basic", version: "1.0.0", env },
  });
  expect(response.status).toBe(200);
  return response.body.execution.id;
}

const execution = async (id: string) =>
  (await call(`${server.baseUrl}/executions/${id}`, { headers: ci })).body;
const log = async (id: string) =>
  (await call(`${server.baseUrl}/executions/${id}/log`, { headers: ci })).body as string;
const finished = (id: string) =>
  waitFor(`execution ${id} to finish`, async () => {
    const view = await execution(id);
    return !["queued", "running"].includes(view.status) && view;
  });

beforeAll(async () => {
  server = await startTestServer({
    env: {
      TESTBAY_LEASE_TTL_SECONDS: String(ttlSeconds),
      TESTBAY_RATE_LIMIT_BURST: "100000",
      TESTBAY_AGENT_RATE_LIMIT_BURST: "100000",
    },
  });
  scratch = await mkdtemp(path.join(tmpdir(), "testbay-e2e-"));
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  agentCredentials = await server.createClient("acme", "agent");
  await registerBasicApp(server, ci, "1.0.0");
});

afterEach(() => stopAgentProcesses(running));

afterAll(async () => {
  await server.close();
  await rm(scratch, { recursive: true, force: true });
});

describe("testbay-agent against a real server", () => {
  it("runs a shell step whose JUnit report has a failing test: failed, with summary, JUnit, log and artifact", async () => {
    const agent = startAgent("builder", "--allow-shell");
    const script = [
      'echo "hello from $TESTBAY_PACKAGE $TESTBAY_VERSION"',
      'test -s "$TESTBAY_APP_PATH" && echo "binary is here"',
      'mkdir -p reports "$TESTBAY_ARTIFACTS_DIR/screens"',
      "cat > reports/TEST-login.xml <<'XML'",
      '<testsuite name="LoginTest" tests="2"><testcase classname="LoginTest" name="opens" time="0.5"/>',
      '<testcase classname="LoginTest" name="signsIn" time="1.5"><failure message="button missing">at LoginTest.signsIn</failure></testcase></testsuite>',
      "XML",
      'printf "png" > "$TESTBAY_ARTIFACTS_DIR/screens/login.png"',
    ].join("\n");
    const id = await trigger(
      await createPlan([{ type: "shell", name: "ui tests", run: script, junit: "reports/*.xml" }]),
    );
    const view = await finished(id);
    expect(view).toMatchObject({
      status: "failed",
      summary: { tests: 2, passed: 1, failed: 1, skipped: 0, flaky: 0 },
      devices: [
        {
          status: "failed",
          agent_id: "builder",
          attempt: 1,
          steps: [{ name: "ui tests", status: "failed" }],
        },
      ],
    });
    const junit = await (await fetch(`${server.baseUrl}/executions/${id}/junit`, { headers: ci })).text();
    expect(junit).toContain('<failure message="button missing">at LoginTest.signsIn</failure>');
    expect(junit).toContain('<testcase classname="LoginTest" name="opens" time="0.500"/>');
    const text = await log(id);
    expect(text).toContain("[stdout] hello from com.example.basic 1.0.0");
    expect(text).toContain("[stdout] binary is here");
    const artifacts = await call(`${server.baseUrl}/executions/${id}/artifacts`, { headers: ci });
    expect(artifacts.body.items.map((a: { name: string }) => a.name)).toEqual(["screens/login.png"]);
    const png = await fetch(`${server.baseUrl}/executions/${id}/artifacts/screens/login.png`, {
      headers: ci,
    });
    expect(await png.text()).toBe("png");
    expect(agent.child.exitCode).toBeNull();
  });

  it("keeps all the output and test cases of a step that prints NUL bytes and names a test with one", async () => {
    startAgent("binary", "--allow-shell");
    const script = [
      "printf 'before\\n'",
      "printf 'bin\\0ary\\n'",
      "mkdir -p reports",
      "cat > reports/TEST-nul.xml <<'XML'",
      '<testsuite name="NulTest" tests="2"><testcase classname="NulTest" name="reads&#0;binary" time="0.1"/>',
      '<testcase classname="NulTest" name="after" time="0.1"/></testsuite>',
      "XML",
      "printf 'after\\n'",
    ].join("\n");
    const id = await trigger(
      await createPlan([{ type: "shell", name: "binary output", run: script, junit: "reports/*.xml" }]),
    );
    const view = await finished(id);
    expect(view).toMatchObject({
      status: "passed",
      summary: { tests: 2, passed: 2, failed: 0 },
      devices: [{ status: "passed", steps: [{ name: "binary output", status: "passed" }] }],
    });
    const text = await log(id);
    // The NUL is kept as the textual escape `\u0000` (API.md §2), and no line around it is lost.
    expect(text).toContain("[stdout] before\n");
    expect(text).toContain("[stdout] bin\\u0000ary\n");
    expect(text).toContain("[stdout] after\n");
    const junit = await (await fetch(`${server.baseUrl}/executions/${id}/junit`, { headers: ci })).text();
    expect(junit).toContain('classname="NulTest" name="reads\\u0000binary"');
    expect(junit).toContain('classname="NulTest" name="after"');
  });

  it("re-queues the run of an agent killed mid-run, and another agent finishes it as attempt 2", async () => {
    const marker = path.join(scratch, "killed-once");
    const script = `if [ -e "$MARKER" ]; then echo "second attempt"; else touch "$MARKER"; echo "first attempt"; sleep 20; fi`;
    const id = await trigger(await createPlan([{ type: "shell", run: script }], { max_attempts: 2 }), {
      MARKER: marker,
    });
    const doomed = startAgent("doomed", "--allow-shell");
    await waitFor("the first attempt to start", async () => (await log(id)).includes("first attempt"));
    doomed.child.kill("SIGKILL");
    await doomed.exited;

    startAgent("rescuer", "--allow-shell");
    server.clock.advance(ttlSeconds * 1000 + 1);
    await server.app.services.agents.sweep();
    const view = await finished(id);
    expect(view).toMatchObject({
      status: "passed",
      devices: [{ status: "passed", attempt: 2, agent_id: "rescuer" }],
    });
    const text = await log(id);
    expect(text).toContain("=== device 1, attempt 1 ===");
    expect(text).toContain("=== device 1, attempt 2 ===");
    expect(text).toContain("[stdout] second attempt");
  });

  it("kills the running step's processes when the execution is cancelled, and ends it cancelled", async () => {
    startAgent("canceller", "--allow-shell");
    const id = await trigger(await createPlan([{ type: "shell", run: 'sleep 60 & echo "child=$!"; wait' }]));
    const childLine = await waitFor("the step to start", async () => (await log(id)).match(/child=(\d+)/));
    const pid = Number(childLine?.[1]);
    expect(pid).toBeGreaterThan(0);
    const cancel = await call(`${server.baseUrl}/executions/${id}/cancel`, { method: "POST", headers: ci });
    expect(cancel.body.cancel_requested).toBe(true);
    const view = await finished(id);
    expect(view).toMatchObject({ status: "cancelled", devices: [{ status: "cancelled" }] });
    await waitFor("the step's sleep to be gone", async () => !isAlive(pid), 10_000);
  });

  it("runs each of 30 executions exactly once across 3 agents", async () => {
    const ledger = path.join(scratch, "ledger.txt");
    const planId = await createPlan([
      { type: "shell", run: `echo "$TESTBAY_EXECUTION_ID $TESTBAY_ATTEMPT" >> "$LEDGER"` },
    ]);
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push(await trigger(planId, { LEDGER: ledger }));
    for (const name of ["one", "two", "three"]) startAgent(name, "--allow-shell", "--concurrency", "2");
    const views = await Promise.all(ids.map((id) => finished(id)));
    expect(views.every((v) => v.status === "passed" && v.devices[0].attempt === 1)).toBe(true);
    const lines = (await readFile(ledger, "utf8")).trim().split("\n").sort();
    expect(lines).toEqual(ids.map((id) => `${id} 1`).sort());
    const agents = new Set(views.map((v) => v.devices[0].agent_id));
    expect(agents.size).toBeGreaterThan(1);
  }, 240_000);

  it("hands its running job back on SIGTERM once the grace period ends", async () => {
    const id = await trigger(
      await createPlan([{ type: "shell", run: "echo working; sleep 30" }], { max_attempts: 1 }),
    );
    const agent = startAgent("leaving", "--allow-shell", "--shutdown-grace", "1");
    await waitFor("the step to start", async () => (await log(id)).includes("working"));
    agent.child.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
    // Handed back, not failed: queued again for another agent, even though the plan allows one attempt.
    expect(await execution(id)).toMatchObject({
      status: "running",
      devices: [{ status: "queued", attempt: 2, reason: "agent_shutdown" }],
    });
    await call(`${server.baseUrl}/executions/${id}/cancel`, { method: "POST", headers: ci });
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
