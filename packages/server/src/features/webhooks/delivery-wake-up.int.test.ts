import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reportAttempt } from "../../../test/agent-attempt.ts";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";
import { triggerOneRun } from "./one-run.fixture.ts";
import { TestReceiver } from "./test-receiver.ts";

/**
 * Deliveries start on a signal, not on the backstop polls: with both polls an hour apart (they never run during
 * this file), an execution's events, a test message and a retry still reach the receiver. A change of an
 * execution wakes the fan-out of the instance that made it, inserted deliveries wake the sender, and a retry
 * sets the sender's timer for its time.
 */

const hour = 3600 * 1000;
const retryMs = 300;

let server: TestServer;
let ci: Record<string, string>;
let agent: Record<string, string>;
const receivers: TestReceiver[] = [];

beforeAll(async () => {
  server = await startTestServer({
    env: {
      TESTBAY_RATE_LIMIT_BURST: "100000",
      TESTBAY_WEBHOOK_ALLOW_PRIVATE: "true",
      TESTBAY_WEBHOOK_RETRY_SCHEDULE: `${retryMs}ms`,
    },
    webhookBackstopMs: { fanOut: hour, send: hour },
  });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
});
afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.close();
});
afterAll(() => server.close());

async function receiverFor(events: string[]): Promise<{ target: TestReceiver; id: string }> {
  const target = await TestReceiver.start();
  receivers.push(target);
  const created = await call(`${server.baseUrl}/webhooks`, {
    headers: ci,
    json: { url: target.url, events },
  });
  expect(created.status).toBe(201);
  target.secret = created.body.secret;
  return { target, id: created.body.id };
}

/** Waits until the webhook's last message shows `count` attempts (recorded just after the receiver answers). */
async function attemptsLogged(id: string, count: number): Promise<void> {
  const until = Date.now() + 30_000;
  for (;;) {
    const log = await call(`${server.baseUrl}/webhooks/${id}/deliveries`, { headers: ci });
    if (log.body.items[0]?.attempts.length === count) return;
    if (Date.now() > until) throw new Error(`never ${count} attempts: ${JSON.stringify(log.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("webhooks without their backstop polls", () => {
  it("deliver a run's execution.started and execution.finished: the run's changes wake the fan-out", async () => {
    const { target } = await receiverFor(["execution.started", "execution.finished"]);
    await triggerOneRun(server, ci);
    await reportAttempt(server, agent, [["opensCart", "passed"]]);

    const requests = await target.requests(2);
    for (const request of requests) expect(request.verifyError).toBeUndefined();
    expect(requests.map((r) => (r.verified as { type: string }).type).sort()).toEqual([
      "execution.finished",
      "execution.started",
    ]);
  });

  it("send a test message at once: inserting it wakes the sender", async () => {
    const { target, id } = await receiverFor(["execution.finished"]);
    const accepted = await call(`${server.baseUrl}/webhooks/${id}/test`, { method: "POST", headers: ci });
    expect(accepted.status).toBe(202);
    const [request] = await target.requests(1);
    expect(request?.headers["webhook-id"]).toBe(accepted.body.delivery_id);
    expect(request?.verifyError).toBeUndefined();
  });

  it("deliver version.uploaded: the upload wakes the fan-out", async () => {
    const { target } = await receiverFor(["version.uploaded"]);
    await registerBasicApp(server, ci, "2.0.0");
    const [request] = await target.requests(1);
    expect(request?.verifyError).toBeUndefined();
    expect(request?.verified).toMatchObject({
      type: "version.uploaded",
      data: { package_name: "com.example.basic", version: "2.0.0" },
    });
  });

  it("retry when the retry is due: the sender's timer, not its poll", async () => {
    const { target, id } = await receiverFor(["execution.finished"]);
    target.answers.push({ status: 503 });
    await call(`${server.baseUrl}/webhooks/${id}/test`, { method: "POST", headers: ci });
    const [first] = await target.requests(1);
    // Once the failure is recorded (the retry's time taken from the server's clock), that clock passes the
    // retry's time; the timer set for it finds it due.
    await attemptsLogged(id, 1);
    server.clock.advance(retryMs);
    const [, second] = await target.requests(2);
    expect(second?.headers["webhook-id"]).toBe(first?.headers["webhook-id"]);
    expect(second?.verifyError).toBeUndefined();
  });
});
