import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";

// GET /v1/events over real HTTP. In the scaled project the stream is opened on one API instance and everything
// that changes the execution (trigger, claim, results, completion) is sent to the other, so a hint has to
// cross instances (PostgreSQL NOTIFY) to arrive.

interface ServerEvent {
  event: string;
  data: unknown;
}

/** Reads a text/event-stream as it arrives; `next` waits (bounded) for the first event that matches. */
async function openEvents(url: string, headers: Record<string, string>) {
  const abort = new AbortController();
  const response = await fetch(url, { headers, signal: abort.signal });
  const received: ServerEvent[] = [];
  const waiters: Array<() => void> = [];
  let ended = false;
  const reading = (async () => {
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = new Map(
            block
              .split("\n")
              .filter((line) => line !== "" && !line.startsWith(":"))
              .map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trim()]),
          );
          if (!fields.has("event")) continue;
          received.push({ event: fields.get("event") ?? "", data: JSON.parse(fields.get("data") ?? "null") });
          for (const wake of waiters.splice(0)) wake();
        }
      }
    } catch {
      // aborted by close()
    } finally {
      ended = true;
      for (const wake of waiters.splice(0)) wake();
    }
  })();
  return {
    response,
    received,
    get ended() {
      return ended;
    },
    async next(matches: (event: ServerEvent) => boolean, timeoutMs = 10_000): Promise<ServerEvent> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = received.find(matches);
        if (found) return found;
        if (ended) throw new Error(`stream ended; received ${JSON.stringify(received)}`);
        const left = deadline - Date.now();
        if (left <= 0)
          throw new Error(`no such event within ${timeoutMs} ms; received ${JSON.stringify(received)}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    async close() {
      abort.abort();
      await reading;
    },
  };
}

const isChangeOf = (id: string) => (event: ServerEvent) =>
  event.event === "execution" && (event.data as { execution_id: string | null }).execution_id === id;

let server: TestServer;
/** Where the dashboard listens, and where the API calls go (another instance when scaled). */
let watched: TestServer;
let acting: TestServer;
let ci: Record<string, string>;
let agent: Record<string, string>;
let otherOrgCi: Record<string, string>;

const inspect = { type: "inspect", expect: { debuggable: false } };

async function triggerInspect(headers = ci): Promise<string> {
  const plan = await call(`${acting.baseUrl}/testplans`, {
    headers,
    json: { name: "events", package_name: "com.example.basic", steps: [inspect] },
  });
  expect(plan.status).toBe(201);
  const run = await call(`${acting.baseUrl}/testplan/run`, {
    headers,
    json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(run.status).toBe(200);
  return run.body.execution.id;
}

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  watched = server.instances[0] ?? server;
  acting = server.instances.at(-1) ?? server;
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  otherOrgCi = { "x-api-key": await server.token(await server.createClient("globex", "ci")) };
  await registerBasicApp(server, ci);
  await registerBasicApp(server, otherOrgCi);
});

afterAll(async () => {
  await server?.close();
});

describe("GET /v1/events", () => {
  it("needs credentials like every /v1 call", async () => {
    const response = await call(`${watched.baseUrl}/events`);
    expect(response.status).toBe(401);
    expect(response.body.code).toBe("invalid_access_token");
  });

  it("streams a hint for each change of a run, from trigger to completion, whichever instance saw it", async () => {
    const events = await openEvents(`${watched.baseUrl}/events`, ci);
    try {
      expect(events.response.status).toBe(200);
      expect(events.response.headers.get("content-type")).toMatch(/^text\/event-stream/);
      expect(events.response.headers.get("cache-control")).toContain("no-cache");
      await events.next((event) => event.event === "ready");

      const id = await triggerInspect();
      await events.next(isChangeOf(id));

      const claimed = await call(`${acting.baseUrl}/agent/claim`, {
        headers: agent,
        json: { agent_id: "agent-1", devices: [], step_types: ["inspect"] },
      });
      expect(claimed.status).toBe(200);
      expect(claimed.body.job.execution_id).toBe(id);
      const afterTrigger = events.received.length;
      await events.next(
        (event, index = events.received.indexOf(event)) => index >= afterTrigger && isChangeOf(id)(event),
      );

      const lease = claimed.body.job.lease_id;
      const afterClaim = events.received.length;
      const done = await call(`${acting.baseUrl}/agent/jobs/${lease}/complete`, {
        headers: agent,
        json: { status: "passed", summary: { tests: 0, passed: 0, failed: 0, skipped: 0 } },
      });
      expect(done.status).toBe(200);
      await events.next((event) => events.received.indexOf(event) >= afterClaim && isChangeOf(id)(event));
      // The hint says which run changed; reading it shows how.
      const read = await call(`${acting.baseUrl}/executions/${id}`, { headers: ci });
      expect(read.body.status).toBe("passed");
    } finally {
      await events.close();
    }
  });

  it("never tells one organization about another's runs", async () => {
    const events = await openEvents(`${watched.baseUrl}/events`, ci);
    const other = await openEvents(`${watched.baseUrl}/events`, otherOrgCi);
    try {
      await events.next((event) => event.event === "ready");
      await other.next((event) => event.event === "ready");
      const theirs = await triggerInspect(otherOrgCi);
      await other.next(isChangeOf(theirs));
      // Ours is triggered after theirs; once its hint is here, theirs would have come before it.
      const ours = await triggerInspect();
      await events.next(isChangeOf(ours));
      expect(events.received.some(isChangeOf(theirs))).toBe(false);
    } finally {
      await events.close();
      await other.close();
    }
  });

  it("with execution_id, streams only that run's changes", async () => {
    const first = await triggerInspect();
    const events = await openEvents(`${watched.baseUrl}/events?execution_id=${first}`, ci);
    try {
      await events.next((event) => event.event === "ready");
      const second = await triggerInspect();
      const cancelled = await call(`${acting.baseUrl}/executions/${first}/cancel`, {
        method: "POST",
        headers: ci,
      });
      expect(cancelled.status).toBe(200);
      await events.next(isChangeOf(first));
      // The second run's trigger came before the cancel: its hint, had it been sent, would be here by now.
      expect(events.received.some(isChangeOf(second))).toBe(false);
    } finally {
      await events.close();
    }
  });

  it("refuses a malformed execution_id with a problem", async () => {
    const response = await call(`${watched.baseUrl}/events?execution_id=../x`, { headers: ci });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("invalid_request");
  });
});

describe("closing the server", () => {
  it("ends the open streams instead of waiting for the browsers", async () => {
    const own = await startTestServer();
    const headers = { "x-api-key": await own.token(await own.createClient("acme", "ci")) };
    const events = await openEvents(`${own.instances[0]?.baseUrl ?? own.baseUrl}/events`, headers);
    await events.next((event) => event.event === "ready");
    await own.close();
    await events.close();
    expect(events.ended).toBe(true);
  });
});
