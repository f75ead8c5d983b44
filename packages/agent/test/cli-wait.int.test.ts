import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Testbay } from "@testbay/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../client/src/cli/main.ts";
import { startTestServer, type TestServer } from "../../server/test/harness.ts";
import { Agent } from "../src/runtime/agent.ts";

// `testbay run --wait` (the CI client) against a real server with a real agent working the queue: the
// exit code and the JUnit report come from what the agent found, not from a stand-in.

const apk = fileURLToPath(new URL("../../server/test/fixtures/binaries/app-basic.apk", import.meta.url));
const app = "com.example.basic";

let server: TestServer;
let dir: string;
let ci: { client_id: string; client_secret: string };
let agent: Agent;
let admin: Testbay;

class Captured {
  text = "";
  write(chunk: string) {
    this.text += chunk;
    return true;
  }
}

async function cli(argv: string[]) {
  const stdout = new Captured();
  const stderr = new Captured();
  const code = await main(argv, {
    env: {
      TESTBAY_URL: server.baseUrl,
      TESTBAY_CLIENT_ID: ci.client_id,
      TESTBAY_CLIENT_SECRET: ci.client_secret,
      CI: "true",
    },
    stdout,
    stderr,
    cwd: dir,
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

const plan = async (name: string, expect: Record<string, unknown>) =>
  (await admin.testPlans.create({ name, package_name: app, steps: [{ type: "inspect", expect }] })).id;

beforeAll(async () => {
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  dir = await mkdtemp(path.join(tmpdir(), "testbay-cli-wait-"));
  ci = await server.createClient("acme", "ci");
  const setup = await server.createClient("acme", "ci");
  admin = new Testbay({
    baseUrl: server.baseUrl,
    clientId: setup.client_id,
    clientSecret: setup.client_secret,
  });
  await admin.apps.create({ package_name: app, platform: "android" });
  const agentClient = await server.createClient("acme", "agent");
  agent = new Agent({
    client: new Testbay({
      baseUrl: server.baseUrl,
      clientId: agentClient.client_id,
      clientSecret: agentClient.client_secret,
    }),
    name: "ci-agent",
    allowShell: false,
    devices: "none",
    concurrency: 2,
    workRoot: dir,
    cacheDir: path.join(dir, "cache"),
    log: () => {},
  });
  await agent.start();
});

afterAll(async () => {
  await agent?.stop(0);
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("testbay run --wait with an agent at work", () => {
  it("exits 0 when every plan passes, and 1 with the failing test in the JUnit report when one fails", async () => {
    const passing = await plan("passes", { debuggable: false });
    const ok = await cli([
      "run",
      "--app",
      app,
      "--version",
      "1.2.3",
      "--file",
      apk,
      "--plan",
      passing,
      "--wait",
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/passed/);

    const failing = await plan("too old", { target_sdk_at_least: 35 });
    const bad = await cli([
      "run",
      "--app",
      app,
      "--version",
      "1.2.3",
      "--plan",
      `${passing},${failing}`,
      "--wait",
      "--junit",
      "report.xml",
    ]);
    expect(bad.code, bad.stderr).toBe(1);
    const junit = await readFile(path.join(dir, "report.xml"), "utf8");
    expect(junit).toContain('<testsuites name="testbay" tests="2" failures="1" errors="0">');
    expect(junit).toContain('<testsuite name="too old: agent host (attempt 1)"');
    expect(junit).toContain("targetSdk is 34, expected at least 35");
  });
});
