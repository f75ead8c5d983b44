// Fault injection: the SDK and the CLI against a scripted HTTP server (429s, 502s, dropped connections, 404s,
// 409s…), run in-process with a fake clock, so every wait is recorded and none is slept.
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Captured, problem, ScriptedServer } from "../../test/scripted-server.ts";
import { main } from "../cli/main.ts";
import { FakeClock, seededRandom } from "./clock.ts";
import type { Execution } from "./models.ts";
import { backoffMs } from "./retry-policy.ts";

let server: ScriptedServer;
let dir: string;
let apk: string;
let apkSha: string;
const apkBytes = Buffer.alloc(300_000, 7);

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "testbay-client-"));
  apk = path.join(dir, "app.apk");
  await writeFile(apk, apkBytes);
  apkSha = createHash("sha256").update(apkBytes).digest("hex");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

beforeEach(async () => {
  server = new ScriptedServer();
  await server.start();
});
afterEach(() => server.close());

const seed = 99;

async function cli(argv: string[], env: Record<string, string> = {}, options: { tty?: boolean } = {}) {
  const stdout = new Captured();
  const stderr = new Captured();
  stderr.isTTY = options.tty === true;
  const clock = new FakeClock();
  const code = await main(argv, {
    env: {
      TESTBAY_URL: server.baseUrl,
      TESTBAY_CLIENT_ID: "cl_ci",
      TESTBAY_CLIENT_SECRET: "secret",
      ...env,
    },
    stdout,
    stderr,
    cwd: dir,
    clock,
    random: seededRandom(seed),
  });
  return { code, stdout: stdout.text, stderr: stderr.text, sleeps: clock.sleeps };
}

function execution(id: string, status: Execution["status"], plan = `tp_${id}`): Execution {
  return {
    id,
    kind: "run",
    name: "Smoke",
    test_plan_id: plan,
    package_name: "com.example.basic",
    version: "1.2.3",
    status,
    cancel_requested: false,
    created_at: "2026-01-01T00:00:00.000Z",
    started_at: status === "queued" ? null : "2026-01-01T00:00:01.000Z",
    finished_at: ["queued", "running"].includes(status) ? null : "2026-01-01T00:00:31.000Z",
    summary: { tests: 0, passed: 0, failed: 0, skipped: 0, flaky: 0 },
    ci: null,
    priority: "normal",
    triggered_by: { type: "client", id: "cl_ci", name: null },
    client_result: null,
    waiting_reason: null,
    devices: [
      {
        device: null,
        status,
        attempt: 1,
        started_at: null,
        finished_at: null,
        reason: null,
        summary: null,
        agent_id: null,
        claimed_device: null,
        shard: 0,
        steps: [],
      },
    ],
    steps: [],
  };
}

const batchOk = (...executions: Execution[]) => ({
  status: 200,
  body: { executions, failed_executions: [] },
});
const triggerArgs = [
  "trigger",
  "--app",
  "com.example.basic",
  "--version",
  "1.2.3",
  "--plan",
  "tp_a",
  "--plan",
  "tp_b",
];
const seededDelays = (n: number) => {
  const random = seededRandom(seed);
  return Array.from({ length: n }, (_, attempt) =>
    backoffMs(attempt, random, { baseMs: 500, capMs: 30_000 }),
  );
};

describe("retries against a scripted server", () => {
  it("retries a trigger through 429 (Retry-After 3) and 502 with one Idempotency-Key and one token call", async () => {
    server.script(
      "POST /testplan/run/batch",
      problem(429, "rate_limited", {}, { "retry-after": "3" }),
      problem(502, "bad_gateway"),
      batchOk(execution("ex_1", "queued", "tp_a"), execution("ex_2", "queued", "tp_b")),
    );
    const run = await cli(triggerArgs);
    expect(run.code).toBe(0);
    const attempts = server.requests("POST /testplan/run/batch");
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts.map((a) => a.headers["idempotency-key"])).size).toBe(1);
    expect(attempts[0]?.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(attempts[0]?.body ?? "{}")).toEqual({
      package_name: "com.example.basic",
      version: "1.2.3",
      test_plan_ids: ["tp_a", "tp_b"],
    });
    // The first wait is at least the Retry-After; the second is the seeded jitter for attempt 1.
    const [jitter0, jitter1] = seededDelays(2);
    expect(run.sleeps).toEqual([Math.max(3000, jitter0 ?? 0), jitter1]);
    expect(server.count("POST /oauth/token")).toBe(1);
    expect(run.stdout).toContain("ex_1");
    expect(run.stderr).toMatch(/429 rate_limited; retrying/);
  });

  it("gives up after 6 attempts of 429 without Retry-After, waiting the seeded backoff, and exits 5", async () => {
    server.script("POST /testplan/run/batch", problem(429, "rate_limited"));
    const run = await cli(triggerArgs);
    expect(run.code).toBe(5);
    expect(server.count("POST /testplan/run/batch")).toBe(6);
    expect(run.sleeps).toEqual(seededDelays(5));
    expect(run.stderr).toMatch(/gave up on POST \/testplan\/run\/batch after 6 attempts/);
    expect(run.stderr).toMatch(/rate limit/);
  });

  it("resends a trigger whose connection dropped, with the same key", async () => {
    server.script("POST /testplan/run/batch", { drop: true }, batchOk(execution("ex_1", "queued", "tp_a")));
    const run = await cli(triggerArgs);
    expect(run.code).toBe(0);
    const keys = server.requests("POST /testplan/run/batch").map((r) => r.headers["idempotency-key"]);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(keys[1]);
  });

  it("does not retry a 500 and exits 4 with the server's code, detail and fix", async () => {
    server.script(
      "POST /testplan/run/batch",
      problem(500, "internal_error", { fix: "Contact support at ops@example.com and quote the request_id." }),
    );
    const run = await cli(triggerArgs);
    expect(run.code).toBe(4);
    expect(server.count("POST /testplan/run/batch")).toBe(1);
    expect(run.sleeps).toEqual([]);
    expect(run.stderr).toContain("internal_error");
    expect(run.stderr).toContain("ops@example.com");
    expect(run.stderr).toContain("request_id: req-1");
  });

  it("reports a 404 with the server's detail and fix, never as the service being down, and exits 4", async () => {
    server.script(
      "POST /testplan/run/batch",
      problem(404, "app_version_not_found", {
        detail: "Version 1.2.3 of com.example.basic is not registered.",
        fix: "Register the version first by uploading its binary.",
      }),
    );
    const run = await cli(triggerArgs);
    expect(run.code).toBe(4);
    expect(server.count("POST /testplan/run/batch")).toBe(1);
    expect(run.stderr).toContain("app_version_not_found");
    expect(run.stderr).toContain("Register the version first");
    // The server's detail and fix say precisely what is wrong: the generic word on 404s is left out (rule 14).
    expect(run.stderr).not.toMatch(/A 404 means/);
    expect(run.stderr).toContain("with this CLI: testbay upload --app com.example.basic --version 1.2.3");
    expect(run.stderr).not.toMatch(/service (is )?down|unavailable/i);
  });

  it("says what a 404 means only when the answer says nothing more precise (a proxy's bare 404)", async () => {
    server.script("POST /testplan/run/batch", { status: 404, body: "<html>Not Found</html>" });
    const run = await cli(triggerArgs);
    expect(run.code).toBe(4);
    expect(run.stderr).toMatch(/^error: http_404, 404 on POST \/testplan\/run\/batch/m);
    expect(run.stderr).toMatch(/note: A 404 means a wrong ID or package name, .*the service itself is up\./);
  });

  it("exits 4 on 401 with the fix, 409 and 422 without retrying any of them", async () => {
    for (const [status, code] of [
      [401, "invalid_access_token"],
      [409, "app_exists"],
      [422, "idempotency_key_reused"],
      [400, "invalid_request"],
      [403, "forbidden"],
      [413, "request_too_large"],
    ] as const) {
      server.script("POST /testplan/run/batch", problem(status, code));
      const before = server.count("POST /testplan/run/batch");
      const run = await cli(triggerArgs);
      expect(run.code, code).toBe(4);
      expect(server.count("POST /testplan/run/batch") - before, code).toBe(1);
      expect(run.stderr).toContain(`${code}: fix`);
    }
  });

  it("exits 3 on a 207, naming each plan that did not start with its code, reason and fix", async () => {
    server.script("POST /testplan/run/batch", {
      status: 207,
      body: {
        executions: [execution("ex_1", "queued", "tp_a")],
        failed_executions: [
          {
            test_plan_id: "tp_b",
            status: 404,
            code: "test_plan_not_found",
            reason: "archived",
            detail: "Test plan tp_b is archived.",
            fix: "Restore it with POST /v1/testplans/tp_b/restore, or create a new plan.",
          },
        ],
      },
    });
    const run = await cli([...triggerArgs, "--json"]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("1 of 2 test plans did not start");
    expect(run.stderr).toContain("tp_b: test_plan_not_found (archived)");
    expect(run.stderr).toContain("fix: Restore it with POST /v1/testplans/tp_b/restore");
    const out = JSON.parse(run.stdout);
    expect(out).toMatchObject({ exit_code: 3, failed_executions: [{ test_plan_id: "tp_b" }] });
  });

  it("exits 3 when no plan started (an error status carrying failed_executions)", async () => {
    server.script(
      "POST /testplan/run/batch",
      problem(404, "test_plan_not_found", {
        reason: "unknown",
        executions: [],
        failed_executions: [
          {
            test_plan_id: "tp_a",
            status: 404,
            code: "test_plan_not_found",
            reason: "unknown",
            detail: "No test plan tp_a.",
            fix: "Confirm the test plan ID.",
          },
          {
            test_plan_id: "tp_b",
            status: 404,
            code: "test_plan_not_found",
            reason: "unknown",
            detail: "No test plan tp_b.",
            fix: "Confirm the test plan ID.",
          },
        ],
      }),
    );
    const run = await cli(triggerArgs);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("2 of 2 test plans did not start");
    expect(run.stderr).toContain("tp_a: test_plan_not_found (unknown)");
  });
});

describe("uploads against a scripted server", () => {
  const uploadArgs = ["upload", "--app", "com.example.basic", "--version", "1.2.3", "--file", "app.apk"];
  const versionPath = "/apps/com.example.basic/versions/1.2.3";
  const registered = (sha256: string) => ({
    status: 200,
    body: {
      package_name: "com.example.basic",
      version: "1.2.3",
      size_bytes: apkBytes.length,
      sha256,
      created_at: "2026-01-01T00:00:00Z",
      binary: {},
    },
  });

  it("skips the transfer when HEAD finds the version with this very build, and says so", async () => {
    server.script(`HEAD ${versionPath}`, { status: 200 }).script(`GET ${versionPath}`, registered(apkSha));
    const run = await cli(uploadArgs);
    expect(run.code).toBe(0);
    expect(server.count(`PUT ${versionPath}`)).toBe(0);
    expect(run.stderr).toMatch(
      new RegExp(
        `registered already with this very build \\(sha256 ${apkSha.slice(0, 12)}…\\): skipped the upload`,
      ),
    );
  });

  it("takes the HEAD's ETag as the registered sha256, with no further call", async () => {
    server.script(`HEAD ${versionPath}`, { status: 200, headers: { etag: `"${apkSha}"` } });
    const run = await cli(uploadArgs);
    expect(run.code, run.stderr).toBe(0);
    expect(server.count(`GET ${versionPath}`)).toBe(0);
    expect(server.count(`PUT ${versionPath}`)).toBe(0);
  });

  it("refuses another build under a registered version with exit 4, naming both sha256 prefixes (rule 10)", async () => {
    server
      .script(`HEAD ${versionPath}`, { status: 200 })
      .script(`GET ${versionPath}`, registered("ab".repeat(32)));
    const run = await cli(uploadArgs);
    expect(run.code).toBe(4);
    expect(server.count(`PUT ${versionPath}`)).toBe(0);
    expect(run.stderr).toContain("sha256 abababababab…");
    expect(run.stderr).toContain(`sha256 ${apkSha.slice(0, 12)}…`);
    expect(run.stderr).toMatch(
      /fix: Bump the version: testbay upload --app com\.example\.basic --version NEW_VERSION --file \S*app\.apk/,
    );
  });

  it("refuses a file over GET /me's limit before sending any of it, with the 413's fix (rule 11)", async () => {
    server
      .script(`HEAD ${versionPath}`, { status: 404 })
      .script("GET /me", { status: 200, body: { limits: { max_upload_bytes: apkBytes.length - 1 } } });
    const run = await cli([...uploadArgs, "--json"]);
    expect(run.code).toBe(4);
    expect(server.count(`PUT ${versionPath}`)).toBe(0);
    expect(run.stderr).toMatch(/file_size_exceeded.*the server's limit is \d+ bytes.*Nothing was sent/);
    expect(run.stderr).toContain("fix: Make the binary smaller: strip debug symbols");
    expect(JSON.parse(run.stdout).error).toMatchObject({ status: 413, code: "file_size_exceeded" });
  });

  it("streams the file with its length when HEAD says 404", async () => {
    server
      .script(`HEAD ${versionPath}`, { status: 404 })
      .script(`PUT ${versionPath}`, { ...registered(apkSha), status: 201 });
    const run = await cli([...uploadArgs, "--json"]);
    expect(run.code).toBe(0);
    const [put] = server.requests(`PUT ${versionPath}`);
    expect(put?.bodySha256).toBe(apkSha);
    expect(put?.headers["content-length"]).toBe(String(apkBytes.length));
    expect(put?.headers["content-type"]).toBe("application/octet-stream");
    expect(JSON.parse(run.stdout)).toMatchObject({ outcome: "uploaded", version: { sha256: apkSha } });
  });

  it("draws a progress bar on a terminal only, never with CI=true or when stderr is not a TTY", async () => {
    server
      .script(`HEAD ${versionPath}`, { status: 404 })
      .script(`PUT ${versionPath}`, { ...registered(apkSha), status: 201 });
    const onTerminal = await cli(uploadArgs, { CI: "" }, { tty: true });
    expect(onTerminal.code).toBe(0);
    expect(onTerminal.stderr).toMatch(/Uploading com\.example\.basic 1\.2\.3 \[.*\] 100% 0\.3\/0\.3 MiB/);

    for (const [env, tty] of [
      [{ CI: "true" }, true],
      [{ CI: "" }, false],
    ] as const) {
      const inCi = await cli(uploadArgs, env, { tty });
      expect(inCi.code).toBe(0);
      expect(inCi.stderr).not.toMatch(/\[.*\]/);
      expect(inCi.stderr.includes("\u001b")).toBe(false);
      expect(inCi.stderr).toMatch(/^Uploading com\.example\.basic 1\.2\.3 \(293\.0 KiB\)…$/m);
    }
  });

  it("looks before resending an upload, and takes a registered version with the file's sha256 as success (rule 9)", async () => {
    server
      .script(`HEAD ${versionPath}`, { status: 404 })
      .script(`PUT ${versionPath}`, problem(502, "bad_gateway"))
      .script(`GET ${versionPath}`, registered(apkSha));
    const run = await cli(uploadArgs);
    expect(run.code).toBe(0);
    // The first attempt landed despite the 502: the file is not sent again.
    expect(server.count(`PUT ${versionPath}`)).toBe(1);
    expect(run.stderr).toMatch(/registered by an earlier attempt of this upload \(same sha256\)/);
  });

  it("resends when the earlier attempt did not land, and takes a 409 with the file's sha256 as success (rule 9)", async () => {
    server
      .script(`HEAD ${versionPath}`, { status: 404 })
      .script(`PUT ${versionPath}`, problem(502, "bad_gateway"), problem(409, "app_version_exists"))
      .script(`GET ${versionPath}`, problem(404, "app_version_not_found"), registered(apkSha));
    const run = await cli(uploadArgs);
    expect(run.code).toBe(0);
    const puts = server.requests(`PUT ${versionPath}`);
    expect(puts.map((p) => p.bodySha256)).toEqual([apkSha, apkSha]);
  });

  it("after a dropped connection, reports a version registered with another sha256 as an error saying so", async () => {
    server
      .script(`HEAD ${versionPath}`, { status: 404 })
      .script(`PUT ${versionPath}`, { drop: true })
      .script(`GET ${versionPath}`, registered("0".repeat(64)));
    const run = await cli(uploadArgs);
    expect(run.code).toBe(4);
    expect(server.count(`PUT ${versionPath}`)).toBe(1);
    expect(run.stderr).toMatch(/app_version_exists \(different_binary\)/);
    expect(run.stderr).toContain(`sha256 ${"0".repeat(12)}…`);
    expect(run.stderr).toContain(`sha256 ${apkSha.slice(0, 12)}…`);
    expect(run.stderr).toMatch(/Bump the version/);
  });

  it("does not retry a 413 and passes on its fix", async () => {
    server
      .script(`HEAD ${versionPath}`, { status: 404 })
      .script(
        `PUT ${versionPath}`,
        problem(413, "file_size_exceeded", { fix: "Strip debug symbols or split by ABI." }),
      );
    const run = await cli(uploadArgs);
    expect(run.code).toBe(4);
    expect(server.count(`PUT ${versionPath}`)).toBe(1);
    expect(run.stderr).toContain("split by ABI");
  });
});

describe("the run command against a scripted server", () => {
  const runArgs = [
    "run",
    "--app",
    "com.example.basic",
    "--version",
    "1.2.3",
    "--file",
    "app.apk",
    "--plan",
    "tp_a,tp_b",
    "--wait",
  ];
  const list = (...items: Execution[]) => ({ status: 200, body: { items, next_cursor: null } });

  beforeEach(() => {
    server
      .script("HEAD /apps/com.example.basic/versions/1.2.3", {
        status: 200,
        headers: { etag: `"${apkSha}"` },
      })
      .script(
        "POST /testplan/run/batch",
        batchOk(execution("ex_1", "queued", "tp_a"), execution("ex_2", "queued", "tp_b")),
      )
      .script("GET /testplans", {
        status: 200,
        body: { items: [{ id: "tp_a", name: "smoke" }], next_cursor: null },
      });
  });

  it("polls with one list call per poll, from 250 ms backing off, and exits 1 with a summary and a JUnit file when one failed", async () => {
    server.script(
      "GET /executions",
      list(execution("ex_1", "queued", "tp_a"), execution("ex_2", "queued", "tp_b")),
      list(execution("ex_1", "running", "tp_a"), execution("ex_2", "running", "tp_b")),
      list(execution("ex_1", "passed", "tp_a"), execution("ex_2", "running", "tp_b")),
      list(execution("ex_1", "passed", "tp_a"), execution("ex_2", "failed", "tp_b")),
    );
    const run = await cli([...runArgs, "--junit", "report.xml"]);
    expect(run.code).toBe(1);
    expect(server.count("GET /executions")).toBe(4);
    expect(server.count("GET /executions/ex_1")).toBe(0);
    expect(server.count("POST /oauth/token")).toBe(1);
    const [poll] = server.requests("GET /executions");
    expect(Object.fromEntries(poll?.query ?? [])).toMatchObject({
      package_name: "com.example.basic",
      version: "1.2.3",
      limit: "200",
    });
    expect(run.sleeps).toEqual([250, 500, 1000, 2000]);
    expect(run.stdout).toMatch(/EXECUTION\s+PLAN\s+STATUS/);
    expect(run.stdout).toMatch(/ex_1\s+smoke \(tp_a\)\s+passed/);
    expect(run.stdout).toMatch(/ex_2\s+tp_b\s+failed/);
    const junit = await readFile(path.join(dir, "report.xml"), "utf8");
    expect(junit).toContain('<testsuites name="testbay" tests="2" failures="1" errors="0">');
    expect(junit).toContain('<failure type="failed"');
    // The CLI asked for each finished execution's agent report; this server has none (404), so each
    // execution keeps its per-device-run testcase.
    expect(server.count("GET /executions/ex_1/junit")).toBe(1);
    expect(server.count("GET /executions/ex_2/junit")).toBe(1);
  });

  it("exits 0 when every execution passed, and makes no token call with TESTBAY_TOKEN", async () => {
    server.script(
      "GET /executions",
      list(execution("ex_1", "passed", "tp_a"), execution("ex_2", "passed", "tp_b")),
    );
    const run = await cli([...runArgs, "--json"], { TESTBAY_TOKEN: "pipeline-token" });
    expect(run.code).toBe(0);
    expect(server.count("POST /oauth/token")).toBe(0);
    expect(server.received.every((r) => r.headers["x-api-key"] === "pipeline-token")).toBe(true);
    expect(JSON.parse(run.stdout)).toMatchObject({
      exit_code: 0,
      timed_out: false,
      executions: [{ status: "passed" }, { status: "passed" }],
    });
  });

  it("does not retry a poll past --timeout: a 503 with a long Retry-After ends the wait with exit 5", async () => {
    server.script("GET /executions", problem(503, "service_unavailable", {}, { "retry-after": "60" }));
    const run = await cli([...runArgs, "--timeout", "10s"]);
    expect(run.code).toBe(5);
    expect(server.count("GET /executions")).toBe(1);
    expect(run.sleeps).toEqual([250]);
    expect(run.stderr).toMatch(/gave up waiting after 10s: 2 executions still 2 queued/);
    expect(run.stdout).toMatch(/EXECUTION\s+PLAN\s+STATUS/);
  });

  it("waits through a server that answers nothing for more than six attempts, with one line when it stops and one when it is back (rule 13)", async () => {
    const gone = [{ drop: true } as const, problem(502, "bad_gateway"), problem(503, "service_unavailable")];
    server.script(
      "GET /executions",
      ...gone,
      ...gone,
      ...gone,
      { drop: true },
      list(execution("ex_1", "passed", "tp_a"), execution("ex_2", "passed", "tp_b")),
    );
    const run = await cli([...runArgs, "--timeout", "4m"]);
    expect(run.code, run.stderr).toBe(0);
    expect(server.count("GET /executions")).toBe(11);
    expect(
      run.stderr.match(/^Server not answering since \d\d:\d\d:\d\d UTC: GET \/executions got no answer/gm),
    ).toHaveLength(1);
    expect(
      run.stderr.match(/^Server answers again \(not answering for [\dms]+\); waiting goes on\.$/gm),
    ).toHaveLength(1);
    expect(run.stderr).not.toMatch(/note: GET \/executions/);
    expect(run.stderr).toMatch(/All executions passed\./);
    // The same jittered backoff as every retry, its ceiling at 30 s.
    for (const [n, sleep] of run.sleeps.slice(1, -1).entries())
      expect(sleep).toBeLessThan(Math.min(30_000, 500 * 2 ** n));
  });

  it("asks for a token again when the restarted server refuses the old one, once, outlasting a token endpoint that does not answer, and waits on", async () => {
    server
      .script(
        "GET /executions",
        { drop: true },
        problem(401, "invalid_access_token"),
        list(execution("ex_1", "passed", "tp_a"), execution("ex_2", "failed", "tp_b")),
      )
      .script(
        "POST /oauth/token",
        {
          status: 200,
          body: {
            access_token: "first",
            token_type: "api-key",
            expires_in: 86_400,
            expires_at: "2026-01-02T00:00:00.000Z",
          },
        },
        // The token endpoint meets the outage too, longer than a token request's own six attempts.
        ...Array.from({ length: 8 }, () => ({ drop: true }) as const),
        {
          status: 200,
          body: {
            access_token: "second",
            token_type: "api-key",
            expires_in: 86_400,
            expires_at: "2026-01-02T00:00:00.000Z",
          },
        },
      );
    const run = await cli(runArgs);
    expect(run.code, run.stderr).toBe(1);
    expect(server.count("POST /oauth/token")).toBe(10);
    expect(server.requests("GET /executions").map((r) => r.headers["x-api-key"])).toEqual([
      "first",
      "first",
      "second",
    ]);
    expect(run.stderr).toMatch(/Not all passed: 1 passed, 1 failed/);
  });

  it("keeps the attempt limit for a trigger: a server that answers nothing is given up on after 6 attempts", async () => {
    server.script("POST /testplan/run/batch", problem(503, "service_unavailable"));
    const run = await cli(runArgs);
    expect(run.code).toBe(5);
    expect(server.count("POST /testplan/run/batch")).toBe(6);
    expect(
      run.stderr.match(
        /^note: POST \/testplan\/run\/batch answered 503 service_unavailable; retrying in [\dms]+ \(attempt \d\)\.$/gm,
      ),
    ).toHaveLength(5);
    expect(run.stderr).not.toMatch(/Server not answering/);
  });

  it("says what a dropped connection met in its retry note, once", async () => {
    server.script("POST /testplan/run/batch", { drop: true }, problem(503, "service_unavailable"));
    const run = await cli(runArgs.slice(0, -1));
    expect(run.stderr).toMatch(
      /^note: POST \/testplan\/run\/batch got no answer: other side closed \(UND_ERR_SOCKET\); retrying in/m,
    );
    expect(run.stderr).not.toMatch(/met|failed: fetch failed/);
  });

  it("follows executions already triggered with status --wait: the same view, summary, JUnit and exit code", async () => {
    server
      .script("GET /executions/ex_1", { status: 200, body: execution("ex_1", "running", "tp_a") })
      .script("GET /executions/ex_2", { status: 200, body: execution("ex_2", "queued", "tp_b") })
      .script(
        "GET /executions",
        { drop: true },
        list(execution("ex_1", "passed", "tp_a"), execution("ex_2", "failed", "tp_b")),
      );
    const run = await cli(["status", "ex_1", "ex_2", "--wait", "--timeout", "5m", "--junit", "status.xml"]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/Waiting for 2 executions \(at most 5m00s\)/);
    expect(run.stderr).toMatch(/Server not answering since/);
    expect(run.stderr).toMatch(/Server answers again/);
    expect(run.stdout).toMatch(/ex_1\s+smoke \(tp_a\)\s+passed/);
    expect(run.stdout).toMatch(/ex_2\s+tp_b\s+failed/);
    expect(run.stderr).toMatch(/Not all passed: 1 passed, 1 failed/);
    const junit = await readFile(path.join(dir, "status.xml"), "utf8");
    expect(junit).toContain('<testsuites name="testbay" tests="2" failures="1" errors="0">');
    expect(server.count("POST /testplan/run/batch")).toBe(0);
  });

  it("gives up at --timeout with exit 5 while executions stay queued", async () => {
    server.script(
      "GET /executions",
      list(execution("ex_1", "queued", "tp_a"), execution("ex_2", "queued", "tp_b")),
    );
    const run = await cli([...runArgs, "--timeout", "10s"]);
    expect(run.code).toBe(5);
    expect(run.sleeps.reduce((a, b) => a + b, 0)).toBe(10_000);
    expect(run.stderr).toMatch(/gave up waiting after 10s: 2 executions still 2 queued/);
  });
});

describe("usage and configuration errors exit 2 before any call", () => {
  it.each([
    [
      "no URL",
      ["trigger", "--app", "a", "--version", "1", "--plan", "tp"],
      { TESTBAY_URL: "" },
      /TESTBAY_URL/,
    ],
    [
      "no credentials",
      ["trigger", "--app", "a", "--version", "1", "--plan", "tp"],
      { TESTBAY_CLIENT_SECRET: "" },
      /TESTBAY_CLIENT_SECRET/,
    ],
    [
      "an unknown option",
      ["trigger", "--app", "a", "--version", "1", "--plan", "tp", "--nope"],
      {},
      /unknown option/,
    ],
    ["no plan", ["trigger", "--app", "a", "--version", "1"], {}, /at least one test plan/],
    [
      "a missing file",
      ["upload", "--app", "a", "--version", "1", "--file", "missing.apk"],
      {},
      /no such file/,
    ],
    [
      "a bad timeout",
      ["run", "--app", "a", "--version", "1", "--plan", "tp", "--wait", "--timeout", "soon"],
      {},
      /not a duration/,
    ],
    ["no command", [], {}, /Usage: testbay/],
  ])("%s", async (_name, argv, env, message) => {
    const run = await cli(argv, env as Record<string, string>);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(server.received).toHaveLength(0);
  });

  it("--help exits 0 and lists the exit codes", async () => {
    const run = await cli(["--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Exit codes: 0 ok/);
  });
});
