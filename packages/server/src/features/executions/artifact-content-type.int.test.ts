import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimNext } from "../../../test/agent-attempt.ts";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";

// API.md §6: an artifact keeps its type only when it is harmless; scripts, HTML and SVG are served as
// application/octet-stream, never as something a browser would run from the dashboard's origin.

let server: TestServer;
let ci: Record<string, string>;
let agent: Record<string, string>;
let executionId: string;

const artifacts: Array<[name: string, sent: string, served: string]> = [
  ["evil.js", "application/javascript", "application/octet-stream"],
  ["page.html", "text/html", "application/octet-stream"],
  ["drawing.svg", "image/svg+xml", "application/octet-stream"],
  ["screen.png", "image/png", "image/png"],
];

beforeAll(async () => {
  server = await startTestServer();
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  await registerBasicApp(server, ci);
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: "artifact types",
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      steps: [{ type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"] }],
    },
  });
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(run.status).toBe(200);
  executionId = run.body.execution.id;
  const lease = await claimNext(server, agent);
  for (const [name, sent] of artifacts) {
    const put = await fetch(`${server.baseUrl}/agent/jobs/${lease}/artifacts/${name}`, {
      method: "PUT",
      headers: { ...agent, "content-type": sent },
      body: name.endsWith(".png") ? Buffer.from("\x89PNG\r\n\x1a\nnot really") : "<script>alert(1)</script>",
    });
    expect(put.status).toBe(201);
  }
});
afterAll(() => server.close());

describe("GET /v1/executions/{id}/artifacts/{name}", () => {
  it.each(artifacts)("serves %s sent as %s as %s, not to be sniffed", async (name, _sent, served) => {
    const response = await fetch(`${server.baseUrl}/executions/${executionId}/artifacts/${name}`, {
      headers: ci,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe(served);
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    await response.arrayBuffer();
  });
});
