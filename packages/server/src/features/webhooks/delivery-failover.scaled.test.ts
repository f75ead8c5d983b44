import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";
import { ManualClock } from "../../clock.ts";
import { TestReceiver } from "./test-receiver.ts";

/**
 * Scaled configuration only: an instance killed while it holds a delivery mid-flight does not lose it. The
 * two instances of the scaled pair share a clock; a third (the standby) runs on the same database with a
 * clock ten minutes behind, so it cannot take the message first. The receiver holds the first request
 * unanswered, both instances of the pair are killed (so the one holding the delivery is among them), and
 * once the standby's clock passes the holder's lease, the standby sends the message: the same webhook-id,
 * verified by the receiver.
 */

const env = { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_WEBHOOK_ALLOW_PRIVATE: "true" };
const behindMs = 10 * 60 * 1000;

let server: TestServer;
let standby: TestServer;
let target: TestReceiver;

beforeAll(async () => {
  server = await startTestServer({ env });
  expect(server.instances).toHaveLength(2);
  const [first] = server.instances;
  if (!first) throw new Error("two instances expected");
  standby = await startTestServer({
    env,
    shareWith: first,
    clock: new ManualClock(server.clock.now() - behindMs),
  });
  target = await TestReceiver.start();
});
afterAll(async () => {
  await target.close();
  await standby.close();
  await server.close();
});

describe("an instance killed mid-delivery", () => {
  it("does not lose the delivery: another instance sends it, under the same webhook-id, once the lease lapses", async () => {
    const [first, second] = server.instances;
    if (!first || !second) throw new Error("two instances expected");
    const ci = { "x-api-key": await first.token(await first.createClient("acme", "ci")) };
    const created = await call(`${first.baseUrl}/webhooks`, {
      headers: ci,
      json: { url: target.url, events: ["execution.finished"] },
    });
    expect(created.status).toBe(201);
    target.secret = created.body.secret;
    target.answers.push("hang");
    const test = await call(`${first.baseUrl}/webhooks/${created.body.id}/test`, {
      method: "POST",
      headers: ci,
    });
    expect(test.status).toBe(202);

    const [held] = await target.requests(1);
    expect(held?.headers["webhook-id"]).toBe(test.body.delivery_id);
    // The holder is one of the pair: kill both (app.close: what SIGTERM does; the database stays).
    await Promise.all([first.app.close(), second.app.close()]);

    // Past the holder's lease (60 s on the pair's clock) on the standby's clock.
    standby.clock.advance(behindMs + 61_000);
    const requests = await target.requests(2);
    expect(requests[1]?.headers["webhook-id"]).toBe(test.body.delivery_id);
    expect(requests[1]?.verifyError).toBeUndefined();

    const standbyCi = { "x-api-key": await standby.token(await standby.createClient("acme", "ci")) };
    const until = Date.now() + 30_000;
    for (;;) {
      const log = await call(`${standby.baseUrl}/webhooks/${created.body.id}/deliveries`, {
        headers: standbyCi,
      });
      const [delivery] = log.body.items;
      if (delivery?.status === "delivered") {
        // The killed attempt was cut off unrecorded; the standby's is the one the log shows.
        expect(delivery.attempts).toEqual([expect.objectContaining({ status_code: 200, error: null })]);
        break;
      }
      if (Date.now() > until) throw new Error(`not delivered: ${JSON.stringify(log.body)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
});
