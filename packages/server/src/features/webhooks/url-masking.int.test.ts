import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";
import { TestReceiver } from "./test-receiver.ts";

// API.md §9: a webhook's URL (a Slack webhook's path is its secret) shows only scheme, host and port to
// everyone but its managers (ci and admin clients, member and admin people): in the list, the webhook and the
// delivery log's requests. Issue 25: a viewer's GET /v1/webhooks showed a Slack webhook's whole URL.

let server: TestServer;
let receiver: TestReceiver;
let ci: Record<string, string>;
let webhookId: string;
let secretUrl: string;
const cookies: Record<"viewer" | "member", Record<string, string>> = { viewer: {}, member: {} };

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_WEBHOOK_ALLOW_PRIVATE: "true" },
  });
  receiver = await TestReceiver.start();
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  for (const role of ["viewer", "member"] as const) {
    const account = await server.app.services.people.createUser({
      email: `${role}@acme.example`,
      role,
      org: "acme",
    });
    const login = await call(`${server.origin}/auth/login`, {
      json: { email: account.email, password: account.password },
    });
    expect(login.status).toBe(200);
    cookies[role] = { cookie: (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "" };
  }
  const origin = new URL(receiver.url);
  secretUrl = `http://${origin.host}/services/T0/B0/xoxsecret?token=abc`;
  const created = await call(`${server.baseUrl}/webhooks`, {
    headers: ci,
    json: { url: secretUrl, events: ["execution.finished"], format: "slack" },
  });
  expect(created.status).toBe(201);
  webhookId = created.body.id;
  // One attempt in the delivery log, whose request names the URL it went to.
  const test = await call(`${server.baseUrl}/webhooks/${webhookId}/test`, { headers: ci, method: "POST" });
  expect(test.status).toBe(202);
  await receiver.requests(1);
  const until = Date.now() + 10_000;
  while ((await deliveries(ci)).body.items[0]?.attempts.length !== 1) {
    if (Date.now() > until) throw new Error("the test message's attempt was not logged within 10 s");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
});
afterAll(async () => {
  await receiver.close();
  await server.close();
});

const deliveries = (headers: Record<string, string>) =>
  call(`${server.baseUrl}/webhooks/${webhookId}/deliveries`, { headers });

describe("a webhook's URL", () => {
  it("shows only scheme, host and port to a viewer: in the list, the webhook and the delivery log", async () => {
    const masked = `http://${new URL(receiver.url).host}`;
    const list = await call(`${server.baseUrl}/webhooks`, { headers: cookies.viewer });
    expect(list.status).toBe(200);
    expect(list.body.items.map((w: { url: string }) => w.url)).toEqual([masked]);
    const one = await call(`${server.baseUrl}/webhooks/${webhookId}`, { headers: cookies.viewer });
    expect(one.body.url).toBe(masked);
    const log = await deliveries(cookies.viewer);
    expect(log.body.items[0].attempts[0].request.url).toBe(masked);
    for (const body of [list.body, one.body, log.body]) {
      expect(JSON.stringify(body)).not.toMatch(/xoxsecret|token=abc/);
    }
  });

  it("is whole for its managers: a member, and ci clients", async () => {
    for (const headers of [cookies.member, ci]) {
      const one = await call(`${server.baseUrl}/webhooks/${webhookId}`, { headers });
      expect(one.body.url).toBe(secretUrl);
      const log = await deliveries(headers);
      expect(log.body.items[0].attempts[0].request.url).toBe(secretUrl);
    }
  });
});
