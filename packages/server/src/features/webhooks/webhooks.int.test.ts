import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";

/**
 * The webhook settings API (API.md §9) with the address guard on (the default): what is kept, what is shown
 * once, what is refused and why, who may do what, and what the audit log says.
 */

let server: TestServer;
let ci: Record<string, string>;
let admin: Record<string, string>;
let otherOrg: Record<string, string>;
let agent: Record<string, string>;

const hooks = () => `${server.baseUrl}/webhooks`;

async function create(body: Record<string, unknown>, headers = ci) {
  return call(hooks(), { headers, json: body });
}

beforeAll(async () => {
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  admin = { "x-api-key": await server.token(await server.createClient("acme", "admin")) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  otherOrg = { "x-api-key": await server.token(await server.createClient("globex", "ci")) };
});
afterAll(() => server.close());

describe("creating a webhook", () => {
  it("answers 201 with the signing secret once; reads never show it", async () => {
    const created = await create({
      url: "https://hooks.example.com/testbay",
      events: ["execution.finished", "test.flaky_detected"],
      description: "deploy gate",
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^wh_/),
      url: "https://hooks.example.com/testbay",
      events: ["execution.finished", "test.flaky_detected"],
      format: "standard",
      description: "deploy gate",
      enabled: true,
      disabled_reason: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const one = await call(`${hooks()}/${created.body.id}`, { headers: ci });
    expect(one.status).toBe(200);
    expect(one.body).not.toHaveProperty("secret");
    const { secret: _shownOnce, ...withoutSecret } = created.body;
    expect(one.body).toEqual(withoutSecret);
    const list = await call(hooks(), { headers: ci });
    expect(list.body.items).toContainEqual(withoutSecret);
    expect(JSON.stringify(list.body)).not.toContain("whsec_");
  });

  it("gives a slack webhook no secret", async () => {
    const created = await create({
      url: "https://hooks.slack.com/services/T0/B0/x",
      events: ["execution.finished"],
      format: "slack",
    });
    expect(created.status).toBe(201);
    expect(created.body).not.toHaveProperty("secret");
    expect(created.body).toMatchObject({ format: "slack", description: null });
    const rotate = await call(`${hooks()}/${created.body.id}/rotate-secret`, { headers: ci, method: "POST" });
    expect(rotate.status).toBe(400);
    expect(rotate.body.fix).toMatch(/standard-format/);
  });

  it("refuses unknown event names with a fix that lists the valid ones", async () => {
    const refused = await create({
      url: "https://hooks.example.com/x",
      events: ["execution.finished", "run.done"],
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: "invalid_request",
      detail: "Unknown event name: run.done.",
      errors: [{ path: "/events/1", in: "body" }],
    });
    expect(refused.body.fix).toContain(
      "execution.started, execution.finished, version.uploaded, test.flaky_detected",
    );
  });

  it.each([
    ["http://127.0.0.1:9000/hook", "loopback"],
    ["http://169.254.169.254/latest/meta-data/", "linkLocal"],
    ["http://10.0.0.1/hook", "private"],
    ["http://[::1]/hook", "loopback"],
    ["http://localhost:8080/hook", "this machine"],
  ])("refuses %s (%s) while the address guard is on", async (url, why) => {
    const refused = await create({ url, events: ["execution.finished"] });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("invalid_request");
    expect(refused.body.detail).toContain(why);
    expect(refused.body.fix).toContain("TESTBAY_WEBHOOK_ALLOW_PRIVATE=true");
    expect(refused.body.errors).toEqual([{ path: "/url", in: "body", message: expect.any(String) }]);
  });

  it("refuses other schemes and URLs with credentials", async () => {
    expect((await create({ url: "ftp://hooks.example.com/x", events: ["execution.finished"] })).status).toBe(
      400,
    );
    expect((await create({ url: "not a url", events: ["execution.finished"] })).status).toBe(400);
    const withPassword = await create({
      url: "https://u:p@hooks.example.com/x",
      events: ["execution.finished"],
    });
    expect(withPassword.status).toBe(400);
    expect(withPassword.body.fix).toMatch(/signing secret/);
  });

  it("keeps agents out", async () => {
    expect(
      (await create({ url: "https://hooks.example.com/x", events: ["execution.finished"] }, agent)).status,
    ).toBe(403);
    expect((await call(hooks(), { headers: agent })).status).toBe(403);
  });
});

describe("one webhook", () => {
  it("is changed, rotated, tested and deleted by its organization, and is unknown to another", async () => {
    const created = await create({ url: "https://hooks.example.com/a", events: ["execution.started"] });
    const id = created.body.id as string;
    const url = `${hooks()}/${id}`;

    for (const [method, path, json] of [
      ["GET", "", undefined],
      ["PATCH", "", { enabled: false }],
      ["DELETE", "", undefined],
      ["POST", "/rotate-secret", undefined],
      ["POST", "/test", undefined],
      ["GET", "/deliveries", undefined],
    ] as const) {
      const other = await call(`${url}${path}`, { method, headers: otherOrg, ...(json ? { json } : {}) });
      expect(other.status, `${method} ${path}`).toBe(404);
      expect(other.body).toMatchObject({ code: "webhook_not_found", reason: "unknown" });
    }

    const patched = await call(url, {
      method: "PATCH",
      headers: ci,
      json: {
        url: "https://hooks.example.com/b",
        events: ["execution.finished", "execution.finished"],
        description: "b",
      },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      url: "https://hooks.example.com/b",
      events: ["execution.finished"],
      description: "b",
    });
    const guarded = await call(url, { method: "PATCH", headers: ci, json: { url: "http://192.168.1.10/x" } });
    expect(guarded.status).toBe(400);

    const rotated = await call(`${url}/rotate-secret`, { method: "POST", headers: admin });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.body.secret);

    const test = await call(`${url}/test`, { method: "POST", headers: ci });
    expect(test.status).toBe(202);
    expect(test.body).toEqual({ delivery_id: expect.stringMatching(/^msg_/) });
    const unknownDelivery = await call(`${url}/deliveries/msg_nope/redeliver`, {
      method: "POST",
      headers: ci,
    });
    expect(unknownDelivery.status).toBe(404);
    expect(unknownDelivery.body.code).toBe("webhook_delivery_not_found");

    const deleted = await call(url, { method: "DELETE", headers: ci });
    expect(deleted.status).toBe(204);
    expect((await call(url, { headers: ci })).status).toBe(404);

    const audit = await call(`${server.baseUrl}/audit?limit=200`, { headers: admin });
    const actions = (audit.body.items as Array<{ action: string; target: { id: string } }>)
      .filter((entry) => entry.target.id === id)
      .map((entry) => entry.action)
      .sort();
    expect(actions).toEqual([
      "webhook.created",
      "webhook.deleted",
      "webhook.secret_rotated",
      "webhook.updated",
    ]);
  });

  it("lists newest first in pages", async () => {
    const org = { "x-api-key": await server.token(await server.createClient("pages", "ci")) };
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      server.clock.advance(1000);
      ids.push(
        (await create({ url: `https://hooks.example.com/${n}`, events: ["version.uploaded"] }, org)).body.id,
      );
    }
    const first = await call(`${hooks()}?limit=2`, { headers: org });
    expect(first.body.items.map((w: { id: string }) => w.id)).toEqual([ids[2], ids[1]]);
    const second = await call(`${hooks()}?limit=2&cursor=${first.body.next_cursor}`, { headers: org });
    expect(second.body).toEqual({ items: [expect.objectContaining({ id: ids[0] })], next_cursor: null });
  });
});
