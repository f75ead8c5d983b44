import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reportAttempt } from "../../../test/agent-attempt.ts";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";
import { isoTime } from "../../clock.ts";
import { append } from "../events/index.ts";
import { WebhookFanOut } from "./fan-out.ts";
import { triggerOneRun } from "./one-run.fixture.ts";
import { TestReceiver } from "./test-receiver.ts";
import { WebhooksRepo } from "./webhooks.repo.ts";

/**
 * Deliveries to a real receiver on 127.0.0.1 (the address guard lifted, as on-premises receivers need) that
 * verifies every signature with the `standardwebhooks` library: events from the outbox and test messages,
 * retries under one webhook-id, the 10 s timeout, disabling when the schedule is spent (the server's clock,
 * moved by hand), redeliver, Slack's format and a redirect that is not followed.
 */

let server: TestServer;
let ci: Record<string, string>;
let agent: Record<string, string>;
let organizationId: string;
const receivers: TestReceiver[] = [];

/** The default schedule, in ms (API.md §9). */
const schedule = [5, 30, 120, 600, 1800, 3600, 7200, 14_400, 28_800, 28_800].map((s) => s * 1000);

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_WEBHOOK_ALLOW_PRIVATE: "true" },
    // These tests move the server's clock past a retry's time by hand, which the sender's timer (real time)
    // does not see: its backstop poll finds the retry, every 100 ms here rather than every second
    // (delivery-wake-up.int.test.ts sends without the polls).
    webhookBackstopMs: { send: 100 },
  });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  organizationId = (
    await server.app.services.database.db
      .selectFrom("organizations")
      .select("id")
      .where("name", "=", "acme")
      .executeTakeFirstOrThrow()
  ).id;
});
afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.close();
});
afterAll(() => server.close());

async function receiver(): Promise<TestReceiver> {
  const started = await TestReceiver.start();
  receivers.push(started);
  return started;
}

/** A webhook to `target` for `events`; the receiver verifies with its secret from now on. */
async function webhook(target: TestReceiver, events: string[], url = target.url): Promise<string> {
  const created = await call(`${server.baseUrl}/webhooks`, { headers: ci, json: { url, events } });
  expect(created.status).toBe(201);
  target.secret = created.body.secret;
  return created.body.id;
}

interface LoggedAttempt extends Record<string, unknown> {
  request: { url: string; headers: Record<string, string> } | null;
}

async function deliveries(id: string) {
  const log = await call(`${server.baseUrl}/webhooks/${id}/deliveries`, { headers: ci });
  expect(log.status).toBe(200);
  return log.body.items as Array<{
    id: string;
    type: string;
    status: string;
    attempts: LoggedAttempt[];
    request_body: string;
  }>;
}

/** The delivery log once `done` holds of it: the sender records an attempt just after the receiver answers. */
async function logWhen(id: string, done: (items: Awaited<ReturnType<typeof deliveries>>) => boolean) {
  const until = Date.now() + 30_000;
  for (;;) {
    const items = await deliveries(id);
    if (done(items)) return items;
    if (Date.now() > until)
      throw new Error(`delivery log of ${id} never got there: ${JSON.stringify(items)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const attempted = (count: number) => (items: Awaited<ReturnType<typeof deliveries>>) =>
  items[0]?.attempts.length === count;

describe("delivering", () => {
  it("delivers an outbox event, signed, to the webhooks subscribed to its type only", async () => {
    const flaky = await receiver();
    const other = await receiver();
    const flakyHook = await webhook(flaky, ["test.flaky_detected"]);
    const otherHook = await webhook(other, ["execution.finished"]);
    const data = {
      test: { id: "t_1", classname: "LoginTest", name: "signIn" },
      test_plan_id: "tp_1",
      flaky_rate: 0.25,
    };
    const at = isoTime(server.clock.now());
    const eventId = await append(server.app.services.database.db, {
      organizationId,
      type: "test.flaky_detected",
      subjectId: "t_1",
      data,
      at,
    });

    const [request] = await flaky.requests(1);
    expect(request?.verifyError).toBeUndefined();
    expect(request?.verified).toEqual({ type: "test.flaky_detected", timestamp: at, data });
    expect(request?.headers["webhook-id"]).toMatch(/^msg_/);
    expect(request?.headers["webhook-signature"]).toMatch(/^v1,/);
    expect(request?.headers["content-type"]).toBe("application/json");
    const log = await logWhen(flakyHook, (items) => items[0]?.status === "delivered");
    expect(log).toEqual([
      expect.objectContaining({
        id: request?.headers["webhook-id"],
        type: "test.flaky_detected",
        webhook_id: flakyHook,
        status: "delivered",
        next_attempt_at: null,
        attempts: [
          {
            at: expect.any(String),
            status_code: 200,
            duration_ms: expect.any(Number),
            error: null,
            response_body: "thanks",
            request: {
              url: flaky.url,
              headers: {
                "content-type": "application/json",
                "user-agent": "Testbay-Webhooks",
                "webhook-id": request?.headers["webhook-id"],
                "webhook-timestamp": request?.headers["webhook-timestamp"],
                "webhook-signature": request?.headers["webhook-signature"],
              },
            },
          },
        ],
        request_body: request?.body,
      }),
    ]);
    // Fanned out in one transaction with the other's (none): nothing is on its way to the other endpoint.
    expect(await deliveries(otherHook)).toEqual([]);
    expect(other.received).toEqual([]);
    const event = await server.app.services.database.db
      .selectFrom("events")
      .select("dispatched_at")
      .where("id", "=", eventId)
      .executeTakeFirstOrThrow();
    expect(event.dispatched_at).not.toBeNull();
  });

  it("delivers execution.started and execution.finished of a real run, with the execution object", async () => {
    const target = await receiver();
    const id = await webhook(target, ["execution.started", "execution.finished"]);
    const executionId = await triggerOneRun(server, ci);
    await reportAttempt(server, agent, [["opensCart", "passed"]]);

    const requests = await target.requests(2);
    const bodies = requests.map((r) => {
      expect(r.verifyError).toBeUndefined();
      return r.verified as { type: string; data: Record<string, unknown> };
    });
    const finished = bodies.find((b) => b.type === "execution.finished");
    expect(bodies.map((b) => b.type).sort()).toEqual(["execution.finished", "execution.started"]);
    // API.md §9: whichever arrives first, the receiver keeps the one with the higher data.sequence: finished.
    const started = bodies.find((b) => b.type === "execution.started");
    expect(started?.data.sequence).toEqual(expect.any(Number));
    expect(finished?.data.sequence).toEqual(expect.any(Number));
    expect(Number(started?.data.sequence)).toBeLessThan(Number(finished?.data.sequence));
    // The execution object as GET /v1/executions/{id} has it.
    const view = (await call(`${server.baseUrl}/executions/${executionId}`, { headers: ci })).body;
    expect(finished?.data).toMatchObject({
      id: executionId,
      status: "passed",
      package_name: "com.example.basic",
      version: "1.2.3",
      summary: view.summary,
    });
    expect(await logWhen(id, (items) => items.every((d) => d.status === "delivered"))).toHaveLength(2);
  });

  it("fans each event out exactly once while several instances' fan-outs run at once", async () => {
    const target = await receiver();
    const id = await webhook(target, ["version.uploaded"]);
    const { db, dialect } = server.app.services.database;
    const count = 300;
    for (let i = 0; i < count; i++) {
      await append(db, {
        organizationId,
        type: "version.uploaded",
        subjectId: `ver_${i}`,
        data: { version: String(i) },
        at: isoTime(server.clock.now()),
      });
    }
    // Three more fan-outs beside the server's own, as three more instances would run them.
    const drain = async () => {
      const fanOut = new WebhookFanOut(db, dialect, server.clock);
      for (let round = 0; round < 50; round++) await fanOut.dispatch();
    };
    await Promise.all([drain(), drain(), drain()]);
    const undispatched = await db
      .selectFrom("events")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("dispatched_at", "is", null)
      .executeTakeFirstOrThrow();
    expect(Number(undispatched.n)).toBe(0);
    const made = await db
      .selectFrom("webhook_deliveries")
      .select(["event_id"])
      .where("webhook_id", "=", id)
      .execute();
    expect(made).toHaveLength(count);
    expect(new Set(made.map((d) => d.event_id)).size).toBe(count);
    const received = await target.requests(count);
    expect(new Set(received.map((r) => JSON.parse(r.body).data.version)).size).toBe(count);
  });

  it("sends webhook.test on request, under the delivery id it answered", async () => {
    const target = await receiver();
    const id = await webhook(target, ["version.uploaded"]);
    const accepted = await call(`${server.baseUrl}/webhooks/${id}/test`, { method: "POST", headers: ci });
    expect(accepted.status).toBe(202);
    const [request] = await target.requests(1);
    expect(request?.headers["webhook-id"]).toBe(accepted.body.delivery_id);
    expect(request?.verified).toMatchObject({ type: "webhook.test", data: { webhook_id: id } });
  });

  it("retries a receiver answering 500 twice, under the same webhook-id, and the log shows each try", async () => {
    const target = await receiver();
    target.answers.push({ status: 500, body: "boom" }, { status: 500, body: "boom again" });
    const id = await webhook(target, ["execution.finished"]);
    await call(`${server.baseUrl}/webhooks/${id}/test`, { method: "POST", headers: ci });

    await target.requests(1);
    await logWhen(id, attempted(1));
    server.clock.advance(schedule[0] as number);
    await target.requests(2);
    await logWhen(id, attempted(2));
    server.clock.advance(schedule[1] as number);
    const requests = await target.requests(3);
    const [log] = await logWhen(id, (items) => items[0]?.status === "delivered");

    const ids = requests.map((r) => r.headers["webhook-id"]);
    expect(new Set(ids).size).toBe(1);
    expect(ids[0]).toBe(log?.id);
    for (const request of requests) expect(request.verifyError).toBeUndefined();
    // Signed at each attempt with that attempt's time (the receiver checks it against replays).
    for (const request of requests) expect(request.headers["webhook-timestamp"]).toMatch(/^\d{10}$/);
    expect(log?.attempts.map((a) => [a.status_code, a.error, a.response_body])).toEqual([
      [500, "HTTP 500", "boom"],
      [500, "HTTP 500", "boom again"],
      [200, null, "thanks"],
    ]);
  });

  it("gives up on a receiver that does not answer in 10 s and tries again", async () => {
    const target = await receiver();
    target.answers.push("hang");
    const id = await webhook(target, ["execution.finished"]);
    await call(`${server.baseUrl}/webhooks/${id}/test`, { method: "POST", headers: ci });
    await target.requests(1);
    const [first] = await logWhen(id, attempted(1));
    expect(first?.attempts[0]).toMatchObject({
      status_code: null,
      error: "no answer within the timeout",
      // What was sent, though no answer came.
      request: { url: target.url, headers: { "webhook-id": first?.id } },
    });
    expect(first?.attempts[0]?.duration_ms).toBeGreaterThanOrEqual(10_000);
    server.clock.advance(schedule[0] as number);
    const requests = await target.requests(2);
    expect(requests[1]?.headers["webhook-id"]).toBe(requests[0]?.headers["webhook-id"]);
    await logWhen(id, (items) => items[0]?.status === "delivered");
  }, 40_000);

  it("disables the endpoint when a message's schedule is spent, and redelivers it under the same id", async () => {
    const target = await receiver();
    target.answers.push(...Array.from({ length: schedule.length + 1 }, () => ({ status: 503 })));
    const id = await webhook(target, ["execution.finished"]);
    await call(`${server.baseUrl}/webhooks/${id}/test`, { method: "POST", headers: ci });
    for (let attempt = 1; attempt <= schedule.length; attempt++) {
      await target.requests(attempt);
      await logWhen(id, attempted(attempt));
      server.clock.advance(schedule[attempt - 1] as number);
    }
    await target.requests(schedule.length + 1);
    const [failed] = await logWhen(id, (items) => items[0]?.status === "failed");
    expect(failed?.attempts).toHaveLength(schedule.length + 1);
    const disabled = (await call(`${server.baseUrl}/webhooks/${id}`, { headers: ci })).body;
    expect(disabled.enabled).toBe(false);
    expect(disabled.disabled_reason).toContain(`message ${failed?.id} (webhook.test) failed 11 attempts`);
    expect(disabled.disabled_reason).toContain("HTTP 503");

    // Enabled again and redelivered: the same message, the same webhook-id, from the start of the schedule.
    const enabled = await call(`${server.baseUrl}/webhooks/${id}`, {
      method: "PATCH",
      headers: ci,
      json: { enabled: true },
    });
    expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null });
    const redeliver = await call(`${server.baseUrl}/webhooks/${id}/deliveries/${failed?.id}/redeliver`, {
      method: "POST",
      headers: ci,
    });
    expect(redeliver.status).toBe(202);
    const requests = await target.requests(schedule.length + 2);
    expect(requests.at(-1)?.headers["webhook-id"]).toBe(failed?.id);
    expect(requests.at(-1)?.verifyError).toBeUndefined();
    const [delivered] = await logWhen(id, (items) => items[0]?.status === "delivered");
    expect(delivered?.attempts).toHaveLength(schedule.length + 2);
  });

  it("signs with the rotated secret from the rotation on", async () => {
    const target = await receiver();
    const id = await webhook(target, ["execution.finished"]);
    const old = target.secret;
    const rotated = await call(`${server.baseUrl}/webhooks/${id}/rotate-secret`, {
      method: "POST",
      headers: ci,
    });
    expect(rotated.status).toBe(200);
    await call(`${server.baseUrl}/webhooks/${id}/test`, { method: "POST", headers: ci });
    const [request] = await target.requests(1);
    expect(request?.verifyError).toBe("No matching signature found");
    target.secret = rotated.body.secret;
    await call(`${server.baseUrl}/webhooks/${id}/test`, { method: "POST", headers: ci });
    const [, second] = await target.requests(2);
    expect(second?.verifyError).toBeUndefined();
    expect(old).not.toBe(rotated.body.secret);
  });

  it("does not follow a redirect to loopback", async () => {
    const inside = await receiver();
    const target = await receiver();
    target.answers.push({ status: 307, headers: { location: inside.url } });
    const id = await webhook(target, ["execution.finished"]);
    await call(`${server.baseUrl}/webhooks/${id}/test`, { method: "POST", headers: ci });
    await target.requests(1);
    const [log] = await logWhen(id, attempted(1));
    expect(log?.attempts[0]).toMatchObject({
      status_code: 307,
      error: expect.stringMatching(/^redirect to http:\/\/127\.0\.0\.1:\d+\/hook not followed/),
    });
    expect(inside.received).toEqual([]);
  });

  it("sends slack-format webhooks Slack's body, unsigned", async () => {
    const target = await receiver();
    const created = await call(`${server.baseUrl}/webhooks`, {
      headers: ci,
      json: { url: target.url, events: ["execution.finished"], format: "slack" },
    });
    await call(`${server.baseUrl}/webhooks/${created.body.id}/test`, { method: "POST", headers: ci });
    const [request] = await target.requests(1);
    expect(request?.headers).not.toHaveProperty("webhook-signature");
    const body = JSON.parse(request?.body ?? "{}");
    expect(body).toEqual({ text: expect.stringContaining("this webhook works"), blocks: expect.any(Array) });
  });

  it("logs each attempt's request as the receiver got it: a fresh timestamp on a retry, the URL after a PATCH", async () => {
    const before = await receiver();
    const after = await receiver();
    before.answers.push({ status: 500, body: "not yet" });
    const id = await webhook(before, ["execution.finished"]);
    after.secret = before.secret;
    await call(`${server.baseUrl}/webhooks/${id}/test`, { method: "POST", headers: ci });
    const [first] = await before.requests(1);
    await logWhen(id, attempted(1));
    // webhook-timestamp counts seconds: the retry goes out in a later one, so its timestamp must differ.
    const firstSecond = Number(first?.headers["webhook-timestamp"]);
    while (Math.floor(Date.now() / 1000) <= firstSecond)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const moved = await call(`${server.baseUrl}/webhooks/${id}`, {
      method: "PATCH",
      headers: ci,
      json: { url: after.url },
    });
    expect(moved.status).toBe(200);
    server.clock.advance(schedule[0] as number);
    const [second] = await after.requests(1);
    const [log] = await logWhen(id, (items) => items[0]?.status === "delivered");
    if (!log || !first || !second) throw new Error("a delivered message with two requests expected");

    expect(log.attempts.map((a) => [a.status_code, a.request?.url])).toEqual([
      [500, before.url],
      [200, after.url],
    ]);
    for (const [attempt, got] of [
      [log.attempts[0], first],
      [log.attempts[1], second],
    ] as const) {
      const headers = attempt?.request?.headers ?? {};
      expect(Object.keys(headers).sort()).toEqual([
        "content-type",
        "user-agent",
        "webhook-id",
        "webhook-signature",
        "webhook-timestamp",
      ]);
      for (const [name, value] of Object.entries(headers)) expect(got.headers[name]).toBe(value);
      // Byte for byte what the receiver read, and what the logged signature signs.
      expect(Buffer.from(log.request_body).equals(Buffer.from(got.body))).toBe(true);
      expect(new Webhook(before.secret as string).verify(log.request_body, headers)).toEqual(
        JSON.parse(got.body),
      );
    }
    const [firstHeaders, secondHeaders] = log.attempts.map((a) => a.request?.headers ?? {});
    expect(secondHeaders?.["webhook-id"]).toBe(firstHeaders?.["webhook-id"]);
    expect(Number(secondHeaders?.["webhook-timestamp"])).toBeGreaterThan(
      Number(firstHeaders?.["webhook-timestamp"]),
    );
    expect(secondHeaders?.["webhook-signature"]).not.toBe(firstHeaders?.["webhook-signature"]);
  });

  it("logs a Slack message's body before its first attempt and as sent, with no signature headers", async () => {
    const target = await receiver();
    const created = await call(`${server.baseUrl}/webhooks`, {
      headers: ci,
      json: { url: target.url, events: ["execution.finished"], format: "slack" },
    });
    const id = created.body.id;
    // Disabled: the message waits, and the log says what it will send.
    await call(`${server.baseUrl}/webhooks/${id}`, {
      method: "PATCH",
      headers: ci,
      json: { enabled: false },
    });
    await call(`${server.baseUrl}/webhooks/${id}/test`, { method: "POST", headers: ci });
    const [waiting] = await deliveries(id);
    expect(waiting?.attempts).toEqual([]);
    expect(JSON.parse(waiting?.request_body ?? "{}")).toEqual({
      text: expect.stringContaining("this webhook works"),
      blocks: expect.any(Array),
    });

    await call(`${server.baseUrl}/webhooks/${id}`, { method: "PATCH", headers: ci, json: { enabled: true } });
    const [got] = await target.requests(1);
    const [log] = await logWhen(id, (items) => items[0]?.status === "delivered");
    expect(log?.request_body).toBe(got?.body);
    expect(log?.request_body).toBe(waiting?.request_body);
    expect(log?.attempts[0]?.request).toEqual({
      url: target.url,
      headers: { "content-type": "application/json", "user-agent": "Testbay-Webhooks" },
    });
  });

  it("logs the request of an attempt whose connection was refused", async () => {
    const gone = await receiver();
    const id = await webhook(gone, ["execution.finished"]);
    await gone.close();
    await call(`${server.baseUrl}/webhooks/${id}/test`, { method: "POST", headers: ci });
    const [log] = await logWhen(id, attempted(1));
    expect(log?.attempts[0]).toMatchObject({
      status_code: null,
      error: expect.stringMatching(/^ECONNREFUSED/),
      request: { url: gone.url, headers: { "webhook-id": log?.id } },
    });
    expect(log?.attempts[0]?.request?.headers["webhook-signature"]).toMatch(/^v1,/);
    expect(JSON.parse(log?.request_body ?? "{}")).toMatchObject({
      type: "webhook.test",
      data: { webhook_id: id },
    });
  });

  it("records nothing, and fails nothing, for an attempt whose endpoint was deleted while it was in flight", async () => {
    // What the sender does when the receiver answers after the endpoint (and with it its deliveries) was
    // deleted: the attempt's foreign key used to fail, an unhandled rejection in the sender.
    const target = await receiver();
    const id = await webhook(target, ["version.uploaded"]);
    const accepted = await call(`${server.baseUrl}/webhooks/${id}/test`, { method: "POST", headers: ci });
    const deliveryId = accepted.body.delivery_id as string;
    await logWhen(id, attempted(1));
    expect((await call(`${server.baseUrl}/webhooks/${id}`, { method: "DELETE", headers: ci })).status).toBe(
      204,
    );

    const { db, dialect } = server.app.services.database;
    await new WebhooksRepo(db, dialect).recordAttempt(
      {
        id: `wha_late_${deliveryId}`,
        delivery_id: deliveryId,
        at: isoTime(server.clock.now()),
        status_code: 200,
        duration_ms: 5,
        error: null,
        response_excerpt: "thanks",
        request_url: target.url,
        request_headers: "{}",
        request_body: null,
      },
      { id: deliveryId, webhookId: id, leaseId: "a lease the sender held" },
      { status: "delivered" },
    );
    const attempts = await db
      .selectFrom("webhook_attempts")
      .select("id")
      .where("delivery_id", "=", deliveryId)
      .execute();
    expect(attempts).toEqual([]);
  });

  it("forgets finished messages after 30 days, and keeps pending ones", async () => {
    const target = await receiver();
    const id = await webhook(target, ["execution.finished"]);
    await call(`${server.baseUrl}/webhooks/${id}/test`, { method: "POST", headers: ci });
    await target.requests(1);
    await logWhen(id, (items) => items[0]?.status === "delivered");
    await call(`${server.baseUrl}/webhooks/${id}`, {
      method: "PATCH",
      headers: ci,
      json: { enabled: false },
    });
    await call(`${server.baseUrl}/webhooks/${id}/test`, { method: "POST", headers: ci });
    server.clock.advance(31 * 24 * 3600 * 1000);
    const { db, dialect } = server.app.services.database;
    const purged = await new WebhooksRepo(db, dialect).purgeFinishedBefore(
      isoTime(server.clock.now() - 30 * 24 * 3600 * 1000),
    );
    expect(purged).toBeGreaterThanOrEqual(1);
    // Tokens live 24 hours: a fresh one after the month.
    ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
    const left = await deliveries(id);
    expect(left.map((d) => [d.type, d.status])).toEqual([["webhook.test", "pending"]]);
  });
});
