import { Writable } from "node:stream";
import type { Logger } from "pino";
import { describe, expect, it } from "vitest";
import { createLogger, prettyStdout, redactUrl } from "./logging.ts";

describe("redactUrl", () => {
  it("blanks sensitive query values and keeps the rest as sent", () => {
    expect(redactUrl("/v1/me?client_secret=abc&limit=5&x-api-key=t&Token=1&%73ecret=2")).toBe(
      "/v1/me?client_secret=[REDACTED]&limit=5&x-api-key=[REDACTED]&Token=[REDACTED]&%73ecret=[REDACTED]",
    );
  });

  it("leaves URLs without a query alone, and copes with malformed encoding", () => {
    expect(redactUrl("/v1/apps/com.example")).toBe("/v1/apps/com.example");
    expect(redactUrl("/v1/x?%zz=1&password")).toBe("/v1/x?%zz=1&password=[REDACTED]");
  });
});

/** A logger writing into an array, one parsed object per line, without the time and host fields. */
function capturedLogger(level: string) {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) {
        if (!line) continue;
        const { time: _time, pid: _pid, hostname: _hostname, ...rest } = JSON.parse(line);
        lines.push(rest);
      }
      done();
    },
  });
  return { logger: createLogger(level, destination) as unknown as Logger, lines };
}

describe("request loggers (children of the server's logger)", () => {
  // Fastify makes each request's logger as logger.child({ request_id }, {}): the empty options included.
  it("at warn, write nothing for info and debug, and errors with their bindings, as a plain child would", async () => {
    const { logger, lines } = capturedLogger("warn");
    const child = logger.child({ request_id: "req_1" }, {});
    expect(child.level).toBe("warn");
    child.info({ req: { method: "GET" } }, "incoming request");
    child.debug("detail");
    expect(child.isLevelEnabled("info")).toBe(false);
    child.warn({ check: "database" }, "readiness check failed");
    child.error({ err: new Error("boom") }, "request failed");
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toEqual([
      { level: 40, request_id: "req_1", check: "database", msg: "readiness check failed" },
      expect.objectContaining({
        level: 50,
        request_id: "req_1",
        msg: "request failed",
        err: expect.objectContaining({ message: "boom" }),
      }),
    ]);
  });

  it("at warn, keep bindings through a grandchild and redact as the server's logger does", async () => {
    const { logger, lines } = capturedLogger("warn");
    const child = logger.child({ request_id: "req_2" }, {}).child({ client_id: "cl_1" });
    child.error({ body: { client_secret: "s3cret" } }, "failed");
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toEqual([
      {
        level: 50,
        request_id: "req_2",
        client_id: "cl_1",
        body: { client_secret: "[REDACTED]" },
        msg: "failed",
      },
    ]);
  });

  it("at info, write every request line with the request's bindings", async () => {
    const { logger, lines } = capturedLogger("info");
    const child = logger.child({ request_id: "req_3" }, {});
    child.info({ res: { statusCode: 200 } }, "request completed");
    child.debug("not written");
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toEqual([
      { level: 30, request_id: "req_3", res: { statusCode: 200 }, msg: "request completed" },
    ]);
  });

  it("at info, write through a grandchild (authentication binds the client) with every binding", async () => {
    const { logger, lines } = capturedLogger("info");
    const child = logger.child({ request_id: "req_5" }, {}).child({ client_id: "cl_2" });
    expect(child.level).toBe("info");
    child.info({ check: "x" }, "written");
    child.debug("not written");
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toEqual([
      { level: 30, request_id: "req_5", client_id: "cl_2", check: "x", msg: "written" },
    ]);
  });

  it("honour a route's own level, given in the options", async () => {
    const { logger, lines } = capturedLogger("warn");
    const child = logger.child({ request_id: "req_4" }, { level: "debug" });
    expect(child.level).toBe("debug");
    child.debug("written");
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toEqual([{ level: 20, request_id: "req_4", msg: "written" }]);
  });
});

describe("readable lines (TESTBAY_LOG_FORMAT=pretty, or auto on a terminal)", () => {
  it("say a request as method, URL, status and time on one line, other fields after it, no JSON lines", async () => {
    let text = "";
    const sink = new Writable({
      write(chunk, _encoding, done) {
        text += String(chunk);
        done();
      },
    });
    const logger = createLogger("info", prettyStdout(false, sink)) as unknown as Logger;
    logger.info(
      { request_id: "req-7", method: "GET", url: "/v1/me", status: 200, response_time_ms: 1.25 },
      "request completed",
    );
    logger.warn({ path: "/data/testbay.db" }, "restricted a file another user could read");
    logger.info({ body: { client_secret: "s3cr3t" } }, "redaction still applies");
    await new Promise((resolve) => setImmediate(resolve));
    const lines = text.trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: GET \/v1\/me 200 1\.25 ms \{"request_id":"req-7"\}$/,
    );
    expect(lines[1]).toMatch(
      /WARN: restricted a file another user could read \{"path":"\/data\/testbay\.db"\}$/,
    );
    expect(lines[2]).toContain('"client_secret":"[REDACTED]"');
    expect(text).not.toContain("s3cr3t");
  });
});
