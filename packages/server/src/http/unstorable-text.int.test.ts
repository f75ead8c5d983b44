// API.md §2: text no database can store (U+0000, unpaired surrogates) in what clients send is refused with
// 400 invalid_request on SQLite and PostgreSQL alike, never a 5xx. The cases outside testers hit with a 500.
// (Every documented route is covered by test/api-fuzz.int.test.ts; agent-reported text by the log tests.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../test/harness.ts";

let server: TestServer;
let ci: Record<string, string>;
let agent: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  await registerBasicApp(server, ci);
});
afterAll(() => server.close());

function expectRefused(response: {
  status: number;
  body: { code?: string; fix?: string; errors?: unknown[] };
}) {
  expect(response.status, JSON.stringify(response.body)).toBe(400);
  expect(response.body.code).toBe("invalid_request");
  expect(response.body.fix).toMatch(/NUL|UTF-8/);
  expect(response.body.errors?.length).toBeGreaterThan(0);
}

describe("unstorable text from clients", () => {
  it("is refused in the token endpoint's client_id, JSON and form, before any lookup", async () => {
    expectRefused(
      await call(`${server.baseUrl}/oauth/token`, {
        json: { client_id: "cl_\u0000", client_secret: "x", audience: "testbay" },
      }),
    );
    const form = await call(`${server.baseUrl}/oauth/token`, {
      body: new URLSearchParams({ client_id: "cl_\u0000", client_secret: "x", audience: "testbay" }),
    });
    expect(form.status).toBe(400);
    expect(form.body.error).toBe("invalid_request");
  });

  it("is refused in names and display names of apps and plans, with the field named", async () => {
    const app = await call(`${server.baseUrl}/apps`, {
      headers: ci,
      json: { package_name: "com.example.nul", platform: "android", display_name: "Bad\u0000Name" },
    });
    expectRefused(app);
    expect(app.body.errors[0]).toMatchObject({ path: "/display_name", in: "body" });
    expectRefused(
      await call(`${server.baseUrl}/testplans`, {
        headers: ci,
        json: { name: "half \ud800", package_name: "com.example.basic", steps: [{ type: "inspect" }] },
      }),
    );
  });

  it("is refused in a claim's device model, in list filters and in a forged cursor", async () => {
    expectRefused(
      await call(`${server.baseUrl}/agent/claim`, {
        headers: agent,
        json: {
          agent_id: "a1",
          devices: [{ serial: "s1", platform: "android", model: "Pixel\u0000", os_version: "14" }],
        },
      }),
    );
    const filter = await call(`${server.baseUrl}/executions?package_name=com.example%00basic`, {
      headers: ci,
    });
    expectRefused(filter);
    expect(filter.body.errors[0]).toMatchObject({ path: "/package_name", in: "querystring" });
    const cursor = Buffer.from(JSON.stringify(["2026-01-01T00:00:00.000Z", "ex_\u0000"])).toString(
      "base64url",
    );
    const forged = await call(`${server.baseUrl}/executions?cursor=${cursor}`, { headers: ci });
    expect(forged.status).toBe(400);
    expect(forged.body).toMatchObject({ code: "invalid_request", fix: expect.stringMatching(/next_cursor/) });
    expectRefused(await call(`${server.baseUrl}/apps/com.example%00basic`, { headers: ci }));
  });

  it("still serves the same requests without the bad characters", async () => {
    const listed = await call(`${server.baseUrl}/executions?package_name=com.example.basic`, { headers: ci });
    expect(listed.status).toBe(200);
  });
});
