import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Testbay } from "@testbay/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { Agent } from "../src/runtime/agent.ts";
import { stopAgentProcesses, waitFor } from "./agent-process.ts";

// The agent's start-up as an operator meets it: real `testbay-agent` processes against a real server, started
// with the wrong client, a pipeline's token in the shell, or a relative work dir.

type IssuedCredentials = Awaited<ReturnType<TestServer["createClient"]>>;

const agentBin = fileURLToPath(new URL("../bin/testbay-agent.js", import.meta.url));
const agentPackage = JSON.parse(
  await readFile(fileURLToPath(new URL("../package.json", import.meta.url)), "utf8"),
) as { version: string };

let server: TestServer;
let ci: Record<string, string>;
let ciCredentials: IssuedCredentials;
let ciToken: string;
let scratch: string;
const running: ChildProcess[] = [];

interface Started {
  child: ChildProcess;
  /** What it wrote to stderr: its log and messages. */
  output: () => string;
  /** What it wrote to stdout: only --version writes there. */
  stdout: () => string;
  exited: Promise<number | null>;
  /** Its exit code once both pipes are read to their end. */
  closed: Promise<number | null>;
}

/**
 * Only the variables given: nothing of this shell's TESTBAY_* leaks into the agent. NODE_OPTIONS carries the
 * test run's "source" condition, so the agent runs these sources and not a build in dist/.
 */
function startAgent(args: string[], env: Record<string, string>, cwd = scratch): Started {
  const child = spawn(process.execPath, [agentBin, "--devices", "none", ...args], {
    cwd,
    env: {
      PATH: process.env.PATH ?? "",
      NODE_OPTIONS: process.env.NODE_OPTIONS ?? "",
      TESTBAY_URL: server.baseUrl,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.push(child);
  let text = "";
  child.stderr?.on("data", (chunk) => {
    text += String(chunk);
  });
  let out = "";
  child.stdout?.on("data", (chunk) => {
    out += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const closed = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  return { child, output: () => text, stdout: () => out, exited, closed };
}

const credentialsEnv = (credentials: IssuedCredentials) => ({
  TESTBAY_CLIENT_ID: credentials.client_id,
  TESTBAY_CLIENT_SECRET: credentials.client_secret,
  TESTBAY_AUDIENCE: server.config.audience,
});

async function setRole(clientId: string, role: "ci" | "agent"): Promise<void> {
  await server.app.services.database.db
    .updateTable("clients")
    .set({ role })
    .where("id", "=", clientId)
    .execute();
}

async function runShellPlan(script: string): Promise<string> {
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: { name: "cli", package_name: "com.example.basic", steps: [{ type: "shell", run: script }] },
  });
  expect(plan.status).toBe(201);
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.0.0" },
  });
  expect(run.status).toBe(200);
  return run.body.execution.id;
}

const execution = async (id: string) =>
  (await call(`${server.baseUrl}/executions/${id}`, { headers: ci })).body;

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  scratch = await mkdtemp(path.join(tmpdir(), "testbay-agent-cli-"));
  ciCredentials = await server.createClient("acme", "ci");
  ciToken = await server.token(ciCredentials);
  ci = { "x-api-key": ciToken };
  await registerBasicApp(server, ci, "1.0.0");
});

afterEach(() => stopAgentProcesses(running));

afterAll(async () => {
  await server.close();
  await rm(scratch, { recursive: true, force: true });
});

describe("testbay-agent start-up", () => {
  it("refuses a ci client with exit 2, naming the role it got and the command for an agent client", async () => {
    const agent = startAgent([], credentialsEnv(ciCredentials));
    expect(await agent.exited).toBe(2);
    expect(agent.output()).toContain(`client ${ciCredentials.client_id} has role ci`);
    expect(agent.output()).toContain("testbay-server client create --org acme --role agent");
    expect(agent.output()).not.toContain("claim failed");
  });

  it("refuses a wrong secret at start with exit 2 (no restart helps) and the commands that rotate or make a client", async () => {
    const credentials = await server.createClient("acme", "agent");
    const wrongSecret = "not-the-secret-0123456789";
    const agent = startAgent([], { ...credentialsEnv(credentials), TESTBAY_CLIENT_SECRET: wrongSecret });
    expect(await agent.closed).toBe(2);
    expect(agent.output()).toContain(
      `cannot start: the server refused client ${credentials.client_id}'s credentials (invalid_access_token:`,
    );
    expect(agent.output()).toContain(`testbay-server client rotate ${credentials.client_id}`);
    expect(agent.output()).toContain("testbay-server client create --org NAME --role agent");
    expect(agent.output()).not.toContain(wrongSecret);
    expect(agent.output()).not.toContain("Gave up");
  });

  it("refuses a disabled client at start with exit 2 and the command that enables it", async () => {
    const credentials = await server.createClient("acme", "agent");
    await server.app.services.clients.disableClient(credentials.client_id);
    const agent = startAgent([], credentialsEnv(credentials));
    expect(await agent.closed).toBe(2);
    expect(agent.output()).toContain("This client is disabled.");
    expect(agent.output()).toContain(`testbay-server client enable ${credentials.client_id}`);
    expect(agent.output()).not.toContain(credentials.client_secret);
  });

  it("prints its version on stdout with --version and exits 0, without credentials", async () => {
    const agent = startAgent(["--version"], {});
    expect(await agent.closed).toBe(0);
    expect(agent.stdout()).toBe(`${agentPackage.version}\n`);
    expect(agent.output()).toBe("");
  });

  it("refuses an exported TESTBAY_TOKEN without agent credentials: exit 2 with what to use instead", async () => {
    const agent = startAgent([], { TESTBAY_TOKEN: ciToken, TESTBAY_AUDIENCE: server.config.audience });
    expect(await agent.exited).toBe(2);
    expect(agent.output()).toContain("No agent credentials: TESTBAY_CLIENT_ID is not set");
    expect(agent.output()).toContain("does not use tokens from `testbay token`");
    expect(agent.output()).toContain("--role agent");
  });

  it("ignores an exported ci TESTBAY_TOKEN when it has agent credentials, and stops cleanly on SIGTERM", async () => {
    const credentials = await server.createClient("acme", "agent");
    const agent = startAgent(["--name", "with-token", "--work-dir", "work-token"], {
      ...credentialsEnv(credentials),
      TESTBAY_TOKEN: ciToken,
    });
    await waitFor("the agent to claim", async () => {
      const agents = await call(`${server.baseUrl}/agents`, { headers: ci });
      return agents.body.items.some(
        (a: { name: string; online: boolean }) => a.name === "with-token" && a.online,
      );
    });
    expect(agent.output()).toContain("TESTBAY_TOKEN is set and ignored");
    agent.child.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
    expect(agent.output()).not.toContain("forbidden");
  });

  it("resolves a relative --work-dir where it was started: a shell step that cd's away still finds its dirs", async () => {
    const credentials = await server.createClient("acme", "agent");
    const startedIn = path.join(scratch, "started-here");
    await mkdir(startedIn);
    const agent = startAgent(
      ["--name", "relative", "--allow-shell", "--work-dir", "jobs", "--cache-dir", "cache"],
      credentialsEnv(credentials),
      startedIn,
    );
    const id = await runShellPlan(
      [
        "cd /",
        'echo "artifacts in $TESTBAY_ARTIFACTS_DIR"',
        'case "$TESTBAY_ARTIFACTS_DIR" in /*) ;; *) echo "relative: $TESTBAY_ARTIFACTS_DIR"; exit 3;; esac',
        'test -s "$TESTBAY_APP_PATH"',
        'echo kept > "$TESTBAY_ARTIFACTS_DIR/note.txt"',
      ].join("\n"),
    );
    const view = await waitFor(`execution ${id} to finish`, async () => {
      const current = await execution(id);
      return !["queued", "running"].includes(current.status) && current;
    });
    const log = await (await fetch(`${server.baseUrl}/executions/${id}/log`, { headers: ci })).text();
    expect(log).toContain(`artifacts in ${startedIn}${path.sep}jobs${path.sep}job-`);
    expect(view.status, log).toBe("passed");
    const note = await fetch(`${server.baseUrl}/executions/${id}/artifacts/note.txt`, { headers: ci });
    expect(await note.text()).toBe("kept\n");
    expect(agent.child.exitCode).toBeNull();
  });

  it("stops with exit 2 and the same advice when the server starts refusing its claims (403)", async () => {
    const credentials = await server.createClient("acme", "agent");
    const agent = startAgent(["--name", "demoted", "--allow-shell"], credentialsEnv(credentials));
    await waitFor("the agent to claim", async () => {
      const agents = await call(`${server.baseUrl}/agents`, { headers: ci });
      return agents.body.items.some(
        (a: { name: string; online: boolean }) => a.name === "demoted" && a.online,
      );
    });
    await setRole(credentials.client_id, "ci");
    // A job wakes the claim under way (it was made while the role was agent); the next one meets the 403.
    await runShellPlan("echo hi");
    expect(await agent.exited).toBe(2);
    expect(agent.output()).toContain("the server refused a claim (forbidden:");
    expect(agent.output()).toContain("testbay-server client create --org acme --role agent");
    expect(agent.output()).not.toContain("trying again");
  });

  it("stops with exit 2 and what to do when its secret is rotated under it (the token endpoint's 401)", async () => {
    const credentials = await server.createClient("acme", "agent");
    const agent = startAgent(["--name", "rotated", "--allow-shell"], credentialsEnv(credentials));
    await waitFor("the agent to claim", async () => {
      const agents = await call(`${server.baseUrl}/agents`, { headers: ci });
      return agents.body.items.some(
        (a: { name: string; online: boolean }) => a.name === "rotated" && a.online,
      );
    });
    // Its token stops working at once (issued before the rotation: the server's clock moves past its second);
    // the new token it asks for is refused, as the old secret is no more.
    server.clock.advance(2000);
    await server.app.services.clients.rotateSecret(credentials.client_id);
    await runShellPlan("echo hi");
    expect(await agent.exited).toBe(2);
    expect(agent.output()).toContain("stopped: the server no longer accepts this client's credentials");
    expect(agent.output()).toContain(`testbay-server client enable ${credentials.client_id}`);
    expect(agent.output()).not.toContain("trying again");
  });
});

describe("Agent", () => {
  it("ends every worker and calls onForbidden once when claims are refused with 403", async () => {
    const credentials = await server.createClient("acme", "agent");
    const refusals: string[] = [];
    const agent = new Agent({
      client: new Testbay({
        baseUrl: server.baseUrl,
        clientId: credentials.client_id,
        clientSecret: credentials.client_secret,
        audience: server.config.audience,
      }),
      name: "in-process",
      allowShell: false,
      devices: "none",
      concurrency: 3,
      workRoot: path.join(scratch, "in-process"),
      cacheDir: path.join(scratch, "in-process-cache"),
      log: () => {},
      claimWaitSeconds: 1,
      onForbidden: (error) => refusals.push(error.code),
    });
    await agent.start();
    await setRole(credentials.client_id, "ci");
    await waitFor("the refusal", async () => refusals.length > 0, 10_000);
    await agent.stop(0);
    expect(refusals).toEqual(["forbidden"]);
  });
});
