import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";
import { startLocalAgent } from "./local-agent.ts";

let server: TestServer;
let ci: Record<string, string>;

async function plan(steps: unknown[]): Promise<string> {
  const response = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: { name: "local", package_name: "com.example.basic", steps },
  });
  return response.body.id;
}

async function run(planId: string): Promise<string> {
  const response = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: planId, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(response.status).toBe(200);
  return response.body.execution.id;
}

async function finished(id: string) {
  const until = Date.now() + 30_000;
  for (;;) {
    const view = (await call(`${server.baseUrl}/executions/${id}`, { headers: ci })).body;
    if (!["queued", "running"].includes(view.status)) return view;
    if (Date.now() > until) throw new Error(`execution ${id} did not finish`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  ci = { "x-api-key": await server.token(await server.createClient("default", "ci")) };
  await registerBasicApp(server, ci);
  await startLocalAgent(server.app, server.config, server.app.services.clients, server.baseUrl);
});
afterAll(() => server.close());

describe("the local agent of the embedded default", () => {
  it("runs an inspect plan to passed with nothing else installed", async () => {
    const id = await run(
      await plan([{ type: "inspect", expect: { debuggable: false, min_sdk_at_most: 24 } }]),
    );
    expect(await finished(id)).toMatchObject({
      status: "passed",
      summary: { tests: 2, passed: 2, failed: 0 },
      devices: [{ agent_id: "local", status: "passed" }],
    });
  });

  it("reports an inspect expectation that does not hold with the actual value", async () => {
    const id = await run(await plan([{ type: "inspect", expect: { target_sdk_at_least: 35 } }]));
    expect(await finished(id)).toMatchObject({ status: "failed", summary: { tests: 1, failed: 1 } });
    const junit = await (await fetch(`${server.baseUrl}/executions/${id}/junit`, { headers: ci })).text();
    expect(junit).toContain("targetSdk is 34");
  });

  it("leaves shell steps alone unless TESTBAY_LOCAL_AGENT_SHELL allows them", async () => {
    const id = await run(await plan([{ type: "shell", run: "echo hi" }]));
    // A later inspect run finishing shows the agent has looked at the queue since.
    await finished(await run(await plan([{ type: "inspect", expect: { debuggable: false } }])));
    const view = (await call(`${server.baseUrl}/executions/${id}`, { headers: ci })).body;
    expect(view.status).toBe("queued");
    await call(`${server.baseUrl}/executions/${id}/cancel`, { method: "POST", headers: ci });
  });

  it("keeps its own credentials in the data dir, readable by the owner only", async () => {
    const file = path.join(server.config.dataDir, "local-agent.json");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, "utf8"))).toMatchObject({
      default: { client_id: expect.stringMatching(/^cl_/) },
    });
  });

  it("serves every organization of the server, each with its own agent client", async () => {
    const acme = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
    await registerBasicApp(server, acme);
    // Started again, as a server restart would: it picks up the new organization and keeps default's client.
    const before = JSON.parse(await readFile(path.join(server.config.dataDir, "local-agent.json"), "utf8"));
    await startLocalAgent(server.app, server.config, server.app.services.clients, server.baseUrl);
    const created = await call(`${server.baseUrl}/testplans`, {
      headers: acme,
      json: {
        name: "acme",
        package_name: "com.example.basic",
        steps: [{ type: "inspect", expect: { debuggable: false } }],
      },
    });
    const triggered = await call(`${server.baseUrl}/testplan/run`, {
      headers: acme,
      json: { test_plan_id: created.body.id, package_name: "com.example.basic", version: "1.2.3" },
    });
    const id = triggered.body.execution.id;
    const until = Date.now() + 30_000;
    let view = triggered.body.execution;
    while (["queued", "running"].includes(view.status) && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      view = (await call(`${server.baseUrl}/executions/${id}`, { headers: acme })).body;
    }
    expect(view).toMatchObject({ status: "passed", devices: [{ agent_id: "local" }] });
    const after = JSON.parse(await readFile(path.join(server.config.dataDir, "local-agent.json"), "utf8"));
    expect(after.default).toEqual(before.default);
    expect(after.acme.client_id).toMatch(/^cl_/);
  });
});
