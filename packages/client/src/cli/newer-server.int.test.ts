// A CLI one version behind its server: the server's answers carry a shape this CLI does not know. Here a real
// server's answers pass through a real HTTP proxy that gives each failed test a newer shape (its `device` moved
// to a `device_run` object). `testbay run --wait --junit` must still print the summary, write the JUnit file and
// exit with the run's result, saying in a warning what it could not read.
import { once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../server/test/harness.ts";
import { inProcessCli } from "../../test/in-process-cli.ts";

let server: TestServer;
let proxy: Server;
let proxyUrl: string;
let dir: string;
let ci: Awaited<ReturnType<TestServer["createClient"]>>;
let agent: Record<string, string>;
/** Runs during the CLI's sleeps: the agent's part of the run. */
let duringSleep: (() => Promise<void>) | undefined;

const cli = inProcessCli(() => ({
  server: { ...server, baseUrl: proxyUrl },
  credentials: ci,
  cwd: dir,
  duringSleep: () => duringSleep?.(),
}));

/** A test case as a newer server might send it: the device it ran on moved into `device_run`. */
function newerShape(body: { items?: Array<Record<string, unknown>> }) {
  for (const item of body.items ?? []) {
    item.device_run = { device: item.device, shard: item.shard, attempt: 1 };
    delete item.device;
  }
  return body;
}

/** Forwards every request to the server; the tests of an execution come back in the newer shape. */
async function startShapeChangingProxy(target: string): Promise<Server> {
  const proxyServer = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(
        ([name]) => !["host", "connection", "content-length"].includes(name),
      ),
    ) as Record<string, string>;
    const upstream = await fetch(`${target}${request.url}`, {
      method: request.method ?? "GET",
      headers,
      ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
    });
    let body = Buffer.from(await upstream.arrayBuffer());
    const pathname = new URL(request.url ?? "/", target).pathname;
    if (upstream.ok && /^\/v1\/executions\/[^/]+\/tests$/.test(pathname)) {
      body = Buffer.from(JSON.stringify(newerShape(JSON.parse(body.toString()))));
    }
    const kept: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (!["content-length", "content-encoding", "transfer-encoding", "connection"].includes(name))
        kept[name] = value;
    });
    response.writeHead(upstream.status, kept);
    response.end(body);
  });
  proxyServer.listen(0, "127.0.0.1");
  await once(proxyServer, "listening");
  return proxyServer;
}

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(path.join(tmpdir(), "testbay-newer-server-"));
  ci = await server.createClient("acme", "ci");
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  await registerBasicApp(server, { "x-api-key": await server.token(ci) });
  proxy = await startShapeChangingProxy(server.origin);
  const address = proxy.address();
  if (typeof address !== "object" || !address) throw new Error("proxy has no address");
  proxyUrl = `http://127.0.0.1:${address.port}/v1`;
});

afterAll(async () => {
  proxy?.close();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The agent's part: takes the run and reports one failed test, then the run as failed. */
async function failTheRun(): Promise<void> {
  const claimed = await call(`${server.baseUrl}/agent/claim`, {
    headers: agent,
    json: { agent_id: "host-1", devices: [], step_types: ["inspect"] },
  });
  if (claimed.status !== 200) return;
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
  await call(`${server.baseUrl}/agent/jobs/${lease}/events`, { headers: agent, json: { events: [failure] } });
  await call(`${server.baseUrl}/agent/jobs/${lease}/complete`, {
    headers: agent,
    json: { status: "failed", summary: { tests: 1, passed: 0, failed: 1, skipped: 0 } },
  });
}

it("writes the summary and the JUnit file and warns about what it cannot read in a newer server's answers", async () => {
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: { "x-api-key": await server.token(ci) },
    json: {
      name: "checkout",
      package_name: "com.example.basic",
      steps: [{ type: "inspect", expect: { debuggable: false } }],
    },
  });
  expect(plan.status).toBe(201);
  duringSleep = failTheRun;
  const run = await cli([
    "run",
    "--app",
    "com.example.basic",
    "--version",
    "1.2.3",
    "--plan",
    "checkout",
    "--wait",
    "--junit",
    "report.xml",
  ]);
  duringSleep = undefined;

  expect(run.code, run.stderr).toBe(1);
  expect(run.stdout).toMatch(/^ex_\w+\s+checkout \(tp_\w+\)\s+failed/m);
  const junit = await readFile(path.join(dir, "report.xml"), "utf8");
  expect(junit).toMatch(/<testcase classname="com\.example\.CartTest" name="paysWithCard"[^>]*>\s*<failure/);
  expect(run.stderr).toMatch(
    /^warning: could not read a failed test's details in ex_\w+ \(Cannot read properties of undefined \(reading 'model'\)\): this CLI \([^)]+\) may be older than the server; get the server's own with curl -fsSLO http:\/\/127\.0\.0\.1:\d+\/downloads\/testbay\.mjs$/m,
  );
  expect(run.stdout).toMatch(
    /✗ com\.example\.CartTest\.paysWithCard \(details unreadable: see testbay junit ex_\w+\)/,
  );
  expect(run.stderr).toMatch(/Not all passed: 1 failed\./);
});
