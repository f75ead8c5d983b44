// `testbay report EXECUTION_ID [-o FILE] [--ctrf]` against a real server (API.md §16): the report to share saved
// where it was asked (or named after the execution), CTRF with --ctrf, and mistakes said with what to do: a
// folder that does not exist (exit 2, before any request), an execution that is not there (exit 4).
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../server/test/harness.ts";
import { inProcessCli } from "../../test/in-process-cli.ts";

let server: TestServer;
let dir: string;
let ci: Awaited<ReturnType<TestServer["createClient"]>>;
let token: string;
let executionId: string;

const cli = inProcessCli(() => ({ server, credentials: ci, cwd: dir, token }));

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(path.join(tmpdir(), "testbay-report-cli-"));
  ci = await server.createClient("acme", "ci");
  token = await server.token(ci);
  const headers = { "x-api-key": token };
  const agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  await registerBasicApp(server, headers);
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers,
    json: {
      name: "checkout",
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      steps: [{ type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"] }],
    },
  });
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers,
    json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.2.3" },
  });
  executionId = run.body.execution.id;
  const claimed = await call(`${server.baseUrl}/agent/claim`, {
    headers: agent,
    json: {
      agent_id: "rack-1",
      devices: [{ serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" }],
      step_types: ["maestro"],
    },
  });
  const lease = claimed.body.job.lease_id;
  const testCase = (seq: number, name: string, status: string, message: string | null) => ({
    seq,
    type: "test_case",
    step_index: 0,
    classname: "com.example.basic.CheckoutTest",
    name,
    status,
    duration_ms: 900,
    message,
    details: message && `java.lang.AssertionError: ${message}\n\tat com.example.basic.CheckoutTest.${name}`,
  });
  await call(`${server.baseUrl}/agent/jobs/${lease}/events`, {
    headers: agent,
    json: {
      events: [
        testCase(1, "paysWithCard", "failed", "card declined"),
        testCase(2, "showsCart", "passed", null),
      ],
    },
  });
  await call(`${server.baseUrl}/agent/jobs/${lease}/complete`, {
    headers: agent,
    json: { status: "failed" },
  });
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe("testbay report", () => {
  it("saves the HTML report named after the execution when no -o is given", async () => {
    const result = await cli(["report", executionId]);
    expect(result.code, result.stderr).toBe(0);
    const file = path.join(dir, `testbay-report-${executionId}.html`);
    expect(result.stderr).toContain(`Wrote the report of ${executionId} to ${file}`);
    const page = await readFile(file, "utf8");
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).toContain("paysWithCard");
    expect(page).toContain("card declined");
  });

  it("saves CTRF JSON with --ctrf to -o, and says where in --json", async () => {
    const result = await cli(["report", executionId, "--ctrf", "-o", "ctrf.json", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const file = path.join(dir, "ctrf.json");
    expect(JSON.parse(result.stdout)).toMatchObject({
      execution_id: executionId,
      format: "ctrf",
      file,
      exit_code: 0,
    });
    const ctrf = JSON.parse(await readFile(file, "utf8"));
    expect(ctrf).toMatchObject({ reportFormat: "CTRF", runId: executionId });
    expect(ctrf.results.summary).toMatchObject({ tests: 2, passed: 1, failed: 1 });
  });

  it("prints the report with -o -", async () => {
    const result = await cli(["report", executionId, "-o", "-"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^<!doctype html>/);
  });

  it("refuses a folder that does not exist before asking the server (exit 2)", async () => {
    const result = await cli(["report", executionId, "-o", "missing/report.html"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `-o missing/report.html: the folder ${path.join(dir, "missing")} does not exist`,
    );
    expect(result.responses.filter((r) => r.path.includes("/report.html"))).toEqual([]);
  });

  it("says an execution that is not there, with the server's reason (exit 4)", async () => {
    const result = await cli(["report", "ex_nosuchexecution"]);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain("execution_not_found");
  });
});
