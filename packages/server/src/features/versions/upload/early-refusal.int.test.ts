import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerBasicApp, startTestServer, type TestServer } from "../../../../test/harness.ts";
import {
  sendRefusedUpload,
  sendRefusedUploadsFromAnotherProcess,
} from "../../../http/lingering-close.fixture.ts";
import { LINGER_MAX_BYTES } from "../../../http/lingering-close.ts";

/**
 * Uploads refused from their headers (409, 404), sent by a client that does not wait for 100 Continue and
 * streams its body at full speed: every one reads the problem document, because the server lingers (reads and
 * drops at most 1 MiB for at most 2 s) before closing instead of resetting the connection.
 */

const MiB = 1024 * 1024;
const fiftyMiB = 50 * MiB;
let server: TestServer;
let ci: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "10000", TESTBAY_RATE_LIMIT_PER_SECOND: "10000" },
  });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  await registerBasicApp(server, ci);
});
afterAll(() => server.close());

function putHead(pathname: string, length: number): string {
  return (
    `PUT ${pathname} HTTP/1.1\r\nhost: x\r\nx-api-key: ${ci["x-api-key"]}\r\n` +
    `content-type: application/octet-stream\r\ncontent-length: ${length}\r\n\r\n`
  );
}

interface LingerLog {
  msg: string;
  read_before_answer: number;
  discarded_bytes: number;
  linger_end: string;
  byte_bound_hit: boolean;
}

function lingerLogs(): LingerLog[] {
  return server.logs
    .join("")
    .split("\n")
    .filter((line) => line.includes("refused upload's connection closed"))
    .map((line) => JSON.parse(line) as LingerLog);
}

async function nextLingerLog(seen: number): Promise<LingerLog> {
  for (let i = 0; i < 200; i++) {
    const logs = lingerLogs();
    if (logs.length > seen) return logs[seen] as LingerLog;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("the refused upload's connection was never closed");
}

describe("an upload refused before its body, sent without Expect at full speed", () => {
  it("reads its 409 app_version_exists every time (20 tries of 50 MiB)", async () => {
    const seen = lingerLogs().length;
    const results = await sendRefusedUploadsFromAnotherProcess({
      origin: server.origin,
      head: putHead("/v1/apps/com.example.basic/versions/1.2.3", fiftyMiB),
      bodyBytes: fiftyMiB,
      tries: 20,
      stopOnAnswer: true,
    });
    const outcomes = results.map((r) =>
      r.status === undefined ? `no answer (${r.error})` : String(r.status),
    );
    expect(outcomes).toEqual(Array(20).fill("409"));
    for (const result of results) {
      expect(result.json).toMatchObject({ code: "app_version_exists", status: 409 });
      // A FIN after the answer, not a reset: the server half-closed.
      expect(result.endedByServer).toBe(true);
    }
    await nextLingerLog(seen + 19);
    const discarded = lingerLogs()
      .slice(seen)
      .map((log) => log.read_before_answer + log.discarded_bytes);
    expect(discarded).toHaveLength(20);
    expect(Math.max(...discarded)).toBeLessThanOrEqual(LINGER_MAX_BYTES);
  });

  it("reads at most 1 MiB of a body the client keeps sending, then closes the connection", async () => {
    const seen = lingerLogs().length;
    const result = await sendRefusedUpload(
      server.origin,
      putHead("/v1/apps/com.example.basic/versions/1.2.3", fiftyMiB),
      fiftyMiB,
      { stopOnAnswer: false },
    );
    expect(result.status).toBe(409);
    // The server closed while the client was sending: its writes failed before the 50 MiB were out.
    expect(result.closedByServer).toBe(true);
    expect(result.bodySent).toBeLessThan(fiftyMiB);
    const log = await nextLingerLog(seen);
    expect(log).toMatchObject({ linger_end: "time", byte_bound_hit: true });
    expect(log.read_before_answer + log.discarded_bytes).toBeLessThanOrEqual(LINGER_MAX_BYTES);
  });

  it("reads its 404 app_not_found for an unknown app", async () => {
    const result = await sendRefusedUpload(
      server.origin,
      putHead("/v1/apps/com.example.unknown/versions/1.0.0", fiftyMiB),
      fiftyMiB,
      { stopOnAnswer: true },
    );
    expect(result.status).toBe(404);
    expect(result.json).toMatchObject({ code: "app_not_found" });
  });
});
