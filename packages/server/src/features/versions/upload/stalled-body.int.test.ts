import { readdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../../test/harness.ts";
import { RawConnection } from "../../../../test/raw-http.ts";

/**
 * Bodies that stall (a client trickling, or hung mid-body) are cut after TESTBAY_BODY_IDLE_TIMEOUT_SECONDS
 * without a byte (1 s here) and their staging files removed; a client that hangs up mid-body is no server
 * error. Driven over raw sockets, since fetch() cannot stop halfway through a body.
 */

let server: TestServer;
let ci: Record<string, string>;
let agent: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer({
    env: {
      TESTBAY_BODY_IDLE_TIMEOUT_SECONDS: "1",
      TESTBAY_RATE_LIMIT_BURST: "10000",
      TESTBAY_AGENT_RATE_LIMIT_BURST: "10000",
    },
  });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  await registerBasicApp(server, ci);
});
afterAll(() => server.close());

const staged = (kind: "uploads" | "artifacts") =>
  readdir(path.join(server.config.dataDir, "tmp", kind)).catch(() => []);

/** Log lines as objects (the logger may write several lines at once). */
function logEntries(): Array<Record<string, unknown>> {
  return server.logs
    .join("")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line));
}

/** Opens a raw connection and sends the head of a PUT with a 100 kB body, then `firstBytes` of it. */
async function startPut(url: string, headers: Record<string, string>, firstBytes: number) {
  const connection = await RawConnection.open(server.origin);
  const head = Object.entries({ host: "x", "content-length": "100000", ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  connection.send(`PUT ${new URL(url).pathname} HTTP/1.1\r\n${head}\r\n`);
  if (firstBytes > 0) await connection.sendBody(Buffer.alloc(firstBytes, 7));
  return connection;
}

async function stillServes() {
  expect((await call(`${server.baseUrl}/me`, { headers: ci })).status).toBe(200);
}

async function until(condition: () => Promise<boolean>, what: string) {
  for (let i = 0; i < 200; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`never: ${what}`);
}

describe("a stalled upload body", () => {
  it.each([
    ["stops after its first bytes", 4096],
    ["never starts", 0],
  ])("that %s is answered 408 request_timeout and closed; nothing is kept", async (_what, firstBytes) => {
    const version = `9.0.${firstBytes}`;
    const url = `${server.baseUrl}/apps/com.example.basic/versions/${version}`;
    const connection = await startPut(url, { ...ci, "content-type": "application/octet-stream" }, firstBytes);

    const response = await connection.finalResponse(10_000);
    expect(response.status).toBe(408);
    expect(response.headers).toMatch(/\r\nconnection: close/i);
    expect(response.json).toMatchObject({ code: "request_timeout", status: 408, retryable: true });
    expect(response.json.detail).toMatch(/No byte of the body arrived for 1 s/);
    expect(response.json.fix).toMatch(/without pauses/);
    expect(await connection.closedByServer()).toBe(true);

    expect(await staged("uploads")).toEqual([]);
    expect((await call(url, { method: "HEAD", headers: ci })).status).toBe(404);
    await stillServes();
    const stalled = logEntries().filter((entry) => entry.msg === "upload stalled; cut off, nothing was kept");
    expect(stalled.length).toBeGreaterThan(0);
    expect(stalled.every((entry) => entry.level === 30)).toBe(true);
  });

  it("is not cut while bytes keep coming, however slowly the whole takes", async () => {
    // 6 pieces 0.4 s apart: 2 s in all, twice the idle timeout, never 1 s without a byte.
    const connection = await startPut(
      `${server.baseUrl}/apps/com.example.basic/versions/9.1.0`,
      { ...ci, "content-type": "application/octet-stream", "content-length": "6" },
      0,
    );
    for (let i = 0; i < 6; i++) {
      await new Promise((resolve) => setTimeout(resolve, 400));
      await connection.sendBody(Buffer.from("x"));
    }
    const response = await connection.finalResponse(10_000);
    // Six bytes are no binary: refused for what they are, not for how slowly they came.
    expect(response.status).toBe(400);
    expect(response.json.code).toBe("unsupported_binary");
    connection.destroy();
  });
});

describe("a client that hangs up mid-upload", () => {
  it("is logged at info, not as an error, and leaves no staging file", async () => {
    const connection = await startPut(
      `${server.baseUrl}/apps/com.example.basic/versions/9.2.0`,
      { ...ci, "content-type": "application/octet-stream" },
      8192,
    );
    await until(async () => (await staged("uploads")).length > 0, "the upload is being staged");
    connection.destroy();
    await until(async () => (await staged("uploads")).length === 0, "the staging file is removed");
    await until(
      async () =>
        logEntries().some((entry) => entry.msg === "upload abandoned by the client; nothing was kept"),
      "the abandoned upload is logged",
    );
    const abandoned = logEntries().filter(
      (e) => e.msg === "upload abandoned by the client; nothing was kept",
    );
    expect(abandoned.every((entry) => entry.level === 30)).toBe(true);
    expect(logEntries().filter((entry) => Number(entry.level) >= 50)).toEqual([]);
    await stillServes();
  });
});

describe("an agent's artifact upload", () => {
  async function lease(): Promise<string> {
    const plan = await call(`${server.baseUrl}/testplans`, {
      headers: ci,
      json: {
        name: `plan-${Math.random()}`,
        package_name: "com.example.basic",
        steps: [{ type: "inspect", expect: { debuggable: false } }],
      },
    });
    const run = await call(`${server.baseUrl}/testplan/run`, {
      headers: ci,
      json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.2.3" },
    });
    expect(run.status).toBe(200);
    const claimed = await call(`${server.baseUrl}/agent/claim`, {
      headers: agent,
      json: { agent_id: "agent-1", devices: [], step_types: ["inspect"] },
    });
    expect(claimed.status).toBe(200);
    return claimed.body.job.lease_id;
  }

  it("that stalls is answered 408 and closed, and leaves no staging file", async () => {
    const url = `${server.baseUrl}/agent/jobs/${await lease()}/artifacts/logs/device.txt`;
    const connection = await startPut(url, { ...agent, "content-type": "text/plain" }, 1024);
    const response = await connection.finalResponse(10_000);
    expect(response.status).toBe(408);
    expect(response.json.code).toBe("request_timeout");
    expect(response.json.detail).toMatch(/artifact upload was cut off/);
    expect(await connection.closedByServer()).toBe(true);
    expect(await staged("artifacts")).toEqual([]);
    await stillServes();
  });

  it("whose agent hangs up is logged at info, not as an error", async () => {
    const url = `${server.baseUrl}/agent/jobs/${await lease()}/artifacts/logs/device.txt`;
    const connection = await startPut(url, { ...agent, "content-type": "text/plain" }, 8192);
    await until(async () => (await staged("artifacts")).length > 0, "the artifact is being staged");
    connection.destroy();
    await until(async () => (await staged("artifacts")).length === 0, "the staging file is removed");
    await until(
      async () =>
        logEntries().some((e) => e.msg === "artifact upload abandoned by the client; nothing was kept"),
      "the abandoned artifact is logged",
    );
    expect(logEntries().filter((entry) => Number(entry.level) >= 50)).toEqual([]);
    await stillServes();
  });
});
