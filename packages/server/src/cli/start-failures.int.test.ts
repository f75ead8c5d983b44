// `testbay-server start` up to where it fails, run in the tests' process (cli/run-server-cli.ts) as the bin
// runs it: a configuration it refuses, a database or Redis it cannot use, and what it says about them, never
// with a secret. And what a start does on PostgreSQL and with a Redis that refuses it, told by a server started
// as `start` starts it (main.ts startServer) in this process. Starts that succeed, as processes:
// start.int.test.ts.
import { generateKeyPairSync } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  accessToken,
  type CliResult,
  clientNames,
  createClientWithCli,
  createWorkspace,
  type Env,
  localAgentClientIds,
  me,
  root,
  runCli,
  startInProcess,
  stderrLines,
  useCliSuite,
} from "../../test/cli-harness.ts";

useCliSuite();

describe("bad configuration", () => {
  /** A data dir that a misconfigured command must never get as far as creating. */
  const untouched = () => path.join(root, "never-created");
  const run = (env: Env) => runCli(["start"], { TESTBAY_DATA_DIR: untouched(), TESTBAY_PORT: "0", ...env });

  it.each([
    ["TESTBAY_PORT", "abc", /port number 0–65535/, { echoed: true }],
    ["TESTBAY_DATABASE_URL", "mysql://x", /sqlite:<file> or postgres:\/\//, { echoed: true }],
    ["TESTBAY_SIGNING_KEY", "garbage", /Ed25519 private key in PEM form/, { echoed: false }],
    ["TESTBAY_RATE_LIMIT_BURST", "0", /whole number ≥ 1/, { echoed: true }],
  ])(
    "%s=%s stops start at once with exit code 2 and one line naming it",
    async (name, value, accepts, { echoed }) => {
      const result = await run({ [name]: value });
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      const lines = stderrLines(result);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`testbay-server: ${name} `);
      expect(lines[0]).toMatch(accepts);
      // What it got is shown, so the mistake is plain to see; but never a secret.
      if (echoed) expect(lines[0]).toContain(`; got ${JSON.stringify(value)}`);
      else expect(result.stderr).not.toContain(value);
      expect(existsSync(untouched())).toBe(false);
    },
  );

  it("never echoes the signing key it rejects", async () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 })
      .privateKey.export({ type: "pkcs8", format: "pem" })
      .toString();
    const result = await run({ TESTBAY_SIGNING_KEY: rsa });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("TESTBAY_SIGNING_KEY");
    expect(result.stderr).not.toContain("PRIVATE KEY");
    expect(result.stderr).not.toContain(rsa.split("\n")[1]);
  });

  it("names every wrong variable at once", async () => {
    const result = await run({
      TESTBAY_PORT: "abc",
      TESTBAY_DATABASE_URL: "mysql://x",
      TESTBAY_RATE_LIMIT_BURST: "0",
    });
    expect(result.code).toBe(2);
    const lines = stderrLines(result);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^testbay-server: TESTBAY_PORT .*; got "abc"$/);
    expect(lines[1]).toMatch(/^testbay-server: TESTBAY_DATABASE_URL .*; got "mysql:\/\/x"$/);
    expect(lines[2]).toMatch(/^testbay-server: TESTBAY_RATE_LIMIT_BURST .*; got "0"$/);
  });
});

describe("secrets in what the server prints", () => {
  const secret = "hunter2-Secret";
  /** Everything the command wrote, both streams (the server's log is on stdout). */
  const printed = (result: CliResult) => `${result.stdout}\n${result.stderr}`;

  it("shows misconfigured URLs with their passwords as ***", async () => {
    const result = await runCli(["start"], {
      TESTBAY_DATA_DIR: path.join(root, "never-created"),
      TESTBAY_PORT: "0",
      TESTBAY_DATABASE_URL: `mysql://root:${secret}@db.example.com/testbay`,
      TESTBAY_REDIS_URL: `http://default:${secret}@cache:6379`,
      TESTBAY_STORAGE_URL: `s3://blobs?region=us-east-1&secret_access_key=${secret}`,
    });
    expect(result.code).toBe(2);
    expect(stderrLines(result)).toEqual([
      expect.stringContaining('got "mysql://root:***@db.example.com/testbay"'),
      expect.stringContaining('got "http://default:***@cache:6379"'),
      expect.stringContaining('got "s3://blobs?region=us-east-1&secret_access_key=***"'),
    ]);
    expect(printed(result)).not.toContain(secret);
  });

  it("names PostgreSQL it cannot reach with the password hidden, and exits", async () => {
    for (const url of [
      `postgres://app:${secret}@127.0.0.1:1/testbay`,
      `postgres://app:${secret}@[::1/testbay`,
    ]) {
      const result = await runCli(["start"], {
        TESTBAY_DATA_DIR: path.join(root, "pg-unreachable"),
        TESTBAY_PORT: "0",
        TESTBAY_DATABASE_URL: url,
      });
      expect(result.code, url).toBe(1);
      expect(result.stderr, url).toMatch(
        /^testbay-server: cannot connect to PostgreSQL at postgres:\/\/app:\*\*\*@/,
      );
      expect(printed(result), url).not.toContain(secret);
    }
  });

  it("names a Redis URL it cannot parse with the password hidden, and exits", async () => {
    const ws = await createWorkspace();
    const result = await runCli(["start"], {
      ...ws.env,
      TESTBAY_REDIS_URL: `redis://:${secret}@[cache:6379`,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("cannot use Redis at redis://:***@[cache:6379");
    expect(printed(result)).not.toContain(secret);
  });

  it("logs a Redis that refuses its password without the password (ioredis attaches the AUTH command)", async () => {
    const ws = await createWorkspace();
    // The limiter waits for Redis (up to 1 s) and says why it failed before the server listens.
    const server = await startInProcess({
      ...ws.env,
      TESTBAY_REDIS_URL: `redis://testbay-nobody:${secret}@127.0.0.1:6379`,
    });
    await server.stop();
    expect(server.log()).toContain('"redis":"redis://testbay-nobody:***@127.0.0.1:6379"');
    expect(server.log()).toMatch(/Redis failed; admitting requests without limit/);
    expect(server.log()).not.toContain(secret);
  });
});

describe("testbay-server start on PostgreSQL", () => {
  it("creates no credentials file: clients come from the admin CLI", async () => {
    const ws = await createWorkspace("postgres");
    const ci = await createClientWithCli(ws.env, "acme", "ci");
    // With its built-in local agent, whose client it names.
    const server = await startInProcess({ ...ws.env, TESTBAY_LOCAL_AGENT: "true" });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    // `start` prints the lines about created credentials only when there is a file (cli/program.ts).
    expect(server.credentialsFile).toBeUndefined();

    const { status, body } = await me(server.url, await accessToken(server.url, ci));
    expect(status).toBe(200);
    expect(body).toMatchObject({ client_id: ci.client_id, role: "ci", organization: { name: "acme" } });

    await server.stop();
    expect(existsSync(path.join(ws.dataDir, "credentials.json"))).toBe(false);
    // The client made without --name has none; the built-in local agent's says what it is.
    const [localAgent] = await localAgentClientIds(ws);
    expect(await clientNames(ws)).toEqual({
      [ci.client_id]: null,
      [localAgent as string]: "Built-in local agent",
    });
  });
});
