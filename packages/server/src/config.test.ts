import { generateKeyPairSync } from "node:crypto";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, unknownVariables } from "./config.ts";

/** The problems of the ConfigError that loadConfig throws for `env`; fails when it throws none. */
function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error(`loadConfig accepted ${Object.keys(env).join(", ")}`);
}

const ed25519Pem = () =>
  generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();

/** Every variable the server reads. */
const settings = [
  "TESTBAY_PORT",
  "TESTBAY_HOST",
  "TESTBAY_DATA_DIR",
  "TESTBAY_DATABASE_URL",
  "TESTBAY_REDIS_URL",
  "TESTBAY_REDIS_COMMAND_TIMEOUT_MS",
  "TESTBAY_STORAGE_URL",
  "TESTBAY_PUBLIC_URL",
  "TESTBAY_INSTANCE_URL",
  "TESTBAY_AUDIENCE",
  "TESTBAY_MAX_UPLOAD_BYTES",
  "TESTBAY_MAX_EXECUTION_LOG_BYTES",
  "TESTBAY_RATE_LIMIT_BURST",
  "TESTBAY_RATE_LIMIT_PER_SECOND",
  "TESTBAY_AGENT_RATE_LIMIT_BURST",
  "TESTBAY_AGENT_RATE_LIMIT_PER_SECOND",
  "TESTBAY_SUPPORT_EMAIL",
  "TESTBAY_SIGNING_KEY",
  "TESTBAY_LOCAL_AGENT",
  "TESTBAY_LOCAL_AGENT_SHELL",
  "TESTBAY_LEASE_TTL_SECONDS",
  "TESTBAY_BODY_IDLE_TIMEOUT_SECONDS",
  "TESTBAY_LOG_LEVEL",
  "TESTBAY_WEBHOOK_RETRY_SCHEDULE",
  "TESTBAY_WEBHOOK_ALLOW_PRIVATE",
];

describe("webhook settings", () => {
  it("reads the retry schedule in its units, spaces around the commas allowed", () => {
    expect(
      loadConfig({ TESTBAY_WEBHOOK_RETRY_SCHEDULE: "500ms, 5s,2m,1h,1d" }).webhookRetryScheduleMs,
    ).toEqual([500, 5000, 120_000, 3_600_000, 86_400_000]);
  });

  it("lifts the address guard only when asked", () => {
    expect(loadConfig({ TESTBAY_WEBHOOK_ALLOW_PRIVATE: "true" }).webhookAllowPrivate).toBe(true);
  });
});

describe("TESTBAY_TRUSTED_PROXIES", () => {
  it("trusts no proxy unless told, then the addresses and ranges listed", () => {
    expect(loadConfig({}).trustedProxies).toEqual([]);
    expect(loadConfig({ TESTBAY_TRUSTED_PROXIES: "10.0.0.5, 10.1.0.0/16,::1" }).trustedProxies).toEqual([
      "10.0.0.5",
      "10.1.0.0/16",
      "::1",
    ]);
  });

  it("refuses what is neither an address nor a range, naming it", () => {
    expect(() => loadConfig({ TESTBAY_TRUSTED_PROXIES: "10.0.0.5,proxy.internal" })).toThrow(
      /TESTBAY_TRUSTED_PROXIES must be comma-separated IP addresses or CIDR ranges.*"proxy.internal" is neither/,
    );
  });
});

describe("TESTBAY_METRICS_TOKEN", () => {
  it("is refused without TESTBAY_METRICS=true, saying what to do and not repeating the token", () => {
    const problems = problemsOf({ TESTBAY_METRICS_TOKEN: "s3cret-scrape-token" });
    expect(problems.join("\n")).toContain("TESTBAY_METRICS_TOKEN is set but TESTBAY_METRICS is not true");
    expect(problems.join("\n")).not.toContain("s3cret-scrape-token");
  });
});

describe("loadConfig defaults", () => {
  it("serves on 127.0.0.1:8080 from ./.testbay with SQLite and file storage in it", () => {
    const dataDir = path.resolve(".testbay");
    expect(loadConfig({})).toEqual({
      port: 8080,
      host: "127.0.0.1",
      dataDir,
      databaseUrl: `sqlite:${path.join(dataDir, "testbay.db")}`,
      redisUrl: undefined,
      redisCommandTimeoutMs: 200,
      storageUrl: `file:${path.join(dataDir, "blobs")}`,
      publicUrl: undefined,
      instanceUrl: undefined,
      audience: "testbay",
      maxUploadBytes: 524_288_000,
      maxExecutionLogBytes: 104_857_600,
      rateLimit: { burst: 20, perSecond: 4 },
      agentRateLimit: { burst: 200, perSecond: 50 },
      supportEmail: undefined,
      signingKey: undefined,
      localAgent: true,
      localAgentShell: false,
      leaseTtlSeconds: 60,
      bodyIdleTimeoutSeconds: 60,
      logLevel: "info",
      logFormat: "auto",
      oidc: undefined,
      webhookRetryScheduleMs: [5, 30, 120, 600, 1800, 3600, 7200, 14_400, 28_800, 28_800].map(
        (s) => s * 1000,
      ),
      webhookAllowPrivate: false,
      trustedProxies: [],
      schedulesTickMs: 15_000,
      metrics: { enabled: false, token: undefined },
    });
  });

  it("puts the default database and blob store in the configured data dir, resolved to an absolute path", () => {
    const absolute = loadConfig({ TESTBAY_DATA_DIR: "/srv/testbay" });
    expect(absolute).toMatchObject({
      dataDir: "/srv/testbay",
      databaseUrl: "sqlite:/srv/testbay/testbay.db",
      storageUrl: "file:/srv/testbay/blobs",
    });
    expect(loadConfig({ TESTBAY_DATA_DIR: "var/tb" }).dataDir).toBe(path.resolve("var/tb"));
  });

  it("treats an empty variable as unset", () => {
    const empty = Object.fromEntries(settings.map((name) => [name, ""]));
    expect(loadConfig(empty)).toEqual(loadConfig({}));
  });

  it("treats a blank variable as unset, so TESTBAY_PORT=' ' does not become port 0", () => {
    const blank = Object.fromEntries(settings.map((name) => [name, "  "]));
    expect(loadConfig(blank)).toEqual(loadConfig({}));
    expect(loadConfig({ TESTBAY_PORT: " " }).port).toBe(8080);
  });
});

describe("loadConfig values", () => {
  it("reads every setting", () => {
    const pem = ed25519Pem();
    const config = loadConfig({
      TESTBAY_PORT: "9090",
      TESTBAY_HOST: "0.0.0.0",
      TESTBAY_DATA_DIR: "/data",
      TESTBAY_DATABASE_URL: "postgres://testbay@db:5432/testbay",
      TESTBAY_REDIS_URL: "redis://cache:6379",
      TESTBAY_REDIS_COMMAND_TIMEOUT_MS: "500",
      TESTBAY_STORAGE_URL: "s3://blobs?endpoint=http://minio:9000",
      TESTBAY_PUBLIC_URL: "https://testbay.example.com/v1/",
      TESTBAY_INSTANCE_URL: "http://10.0.0.7:9090/",
      TESTBAY_AUDIENCE: "https://api.testbay.example.com",
      TESTBAY_MAX_UPLOAD_BYTES: "1000",
      TESTBAY_MAX_EXECUTION_LOG_BYTES: "5000",
      TESTBAY_RATE_LIMIT_BURST: "5",
      TESTBAY_RATE_LIMIT_PER_SECOND: "0.5",
      TESTBAY_METRICS: "true",
      TESTBAY_METRICS_TOKEN: "t0ken",
      TESTBAY_AGENT_RATE_LIMIT_BURST: "100",
      TESTBAY_AGENT_RATE_LIMIT_PER_SECOND: "10",
      TESTBAY_SUPPORT_EMAIL: "help@example.com",
      TESTBAY_SIGNING_KEY: pem,
      TESTBAY_LOCAL_AGENT: "no",
      TESTBAY_LOCAL_AGENT_SHELL: "1",
      TESTBAY_LEASE_TTL_SECONDS: "30",
      TESTBAY_BODY_IDLE_TIMEOUT_SECONDS: "5",
      TESTBAY_LOG_LEVEL: "warn",
      TESTBAY_LOG_FORMAT: "json",
      TESTBAY_WEBHOOK_RETRY_SCHEDULE: "1s,2s",
      TESTBAY_WEBHOOK_ALLOW_PRIVATE: "yes",
      TESTBAY_TRUSTED_PROXIES: "10.0.0.5",
      TESTBAY_SCHEDULES_TICK_MS: "250",
    });
    expect(config).toEqual({
      port: 9090,
      host: "0.0.0.0",
      dataDir: "/data",
      databaseUrl: "postgres://testbay@db:5432/testbay",
      redisUrl: "redis://cache:6379",
      redisCommandTimeoutMs: 500,
      storageUrl: "s3://blobs?endpoint=http://minio:9000",
      publicUrl: "https://testbay.example.com/v1",
      instanceUrl: "http://10.0.0.7:9090",
      audience: "https://api.testbay.example.com",
      maxUploadBytes: 1000,
      maxExecutionLogBytes: 5000,
      rateLimit: { burst: 5, perSecond: 0.5 },
      agentRateLimit: { burst: 100, perSecond: 10 },
      supportEmail: "help@example.com",
      signingKey: pem,
      localAgent: false,
      localAgentShell: true,
      leaseTtlSeconds: 30,
      bodyIdleTimeoutSeconds: 5,
      logLevel: "warn",
      logFormat: "json",
      webhookRetryScheduleMs: [1000, 2000],
      webhookAllowPrivate: true,
      trustedProxies: ["10.0.0.5"],
      schedulesTickMs: 250,
      metrics: { enabled: true, token: "t0ken" },
    });
  });

  it.each([
    ["true", true],
    ["1", true],
    ["yes", true],
    ["false", false],
    ["0", false],
    ["no", false],
  ])("reads %s as %s", (value, expected) => {
    expect(loadConfig({ TESTBAY_LOCAL_AGENT: value }).localAgent).toBe(expected);
  });

  it("accepts port 0 (any free port) and the bounds of the lease TTL", () => {
    expect(loadConfig({ TESTBAY_PORT: "0" }).port).toBe(0);
    expect(loadConfig({ TESTBAY_LEASE_TTL_SECONDS: "5" }).leaseTtlSeconds).toBe(5);
    expect(loadConfig({ TESTBAY_LEASE_TTL_SECONDS: "3600" }).leaseTtlSeconds).toBe(3600);
  });
});

describe("loadConfig rejects invalid values", () => {
  it.each([
    ["TESTBAY_PORT", "abc", /port number 0–65535/],
    ["TESTBAY_PORT", "65536", /port number 0–65535/],
    ["TESTBAY_PORT", "-1", /port number 0–65535/],
    ["TESTBAY_PORT", "80.5", /port number 0–65535/],
    ["TESTBAY_PORT", "0x10", /port number 0–65535/],
    ["TESTBAY_PORT", "1e3", /port number 0–65535/],
    ["TESTBAY_PORT", "8080abc", /port number 0–65535/],
    ["TESTBAY_DATABASE_URL", "sqlite:", /sqlite:<file> or postgres:\/\//],
    ["TESTBAY_PUBLIC_URL", "https://testbay.example.com", /http\(s\) URL ending in \/v1/],
    ["TESTBAY_DATABASE_URL", "mysql://x", /sqlite:<file> or postgres:\/\//],
    ["TESTBAY_DATABASE_URL", "testbay.db", /sqlite:<file> or postgres:\/\//],
    ["TESTBAY_REDIS_URL", "localhost:6379", /redis:\/\/host:port/],
    ["TESTBAY_STORAGE_URL", "/var/blobs", /file:<directory> or s3:\/\/bucket/],
    ["TESTBAY_STORAGE_URL", "gs://bucket", /file:<directory> or s3:\/\/bucket/],
    ["TESTBAY_PUBLIC_URL", "testbay.example.com/v1", /http\(s\) URL ending in \/v1/],
    ["TESTBAY_PUBLIC_URL", "ftp://testbay.example.com/v1", /http\(s\) URL ending in \/v1/],
    ["TESTBAY_INSTANCE_URL", "10.0.0.7:9090", /http\(s\) origin other instances reach/],
    ["TESTBAY_INSTANCE_URL", "http://10.0.0.7:9090/v1", /http\(s\) origin other instances reach/],
    ["TESTBAY_INSTANCE_URL", "http://10.0.0.7:9090/?x=1", /http\(s\) origin other instances reach/],
    ["TESTBAY_MAX_UPLOAD_BYTES", "0", /whole number of bytes ≥ 1/],
    ["TESTBAY_MAX_UPLOAD_BYTES", "1.5", /whole number of bytes ≥ 1/],
    ["TESTBAY_MAX_UPLOAD_BYTES", "500MB", /whole number of bytes ≥ 1/],
    ["TESTBAY_RATE_LIMIT_BURST", "0", /whole number ≥ 1/],
    ["TESTBAY_RATE_LIMIT_BURST", "ten", /whole number ≥ 1/],
    ["TESTBAY_RATE_LIMIT_PER_SECOND", "0", /number > 0/],
    ["TESTBAY_RATE_LIMIT_PER_SECOND", "-1", /number > 0/],
    ["TESTBAY_RATE_LIMIT_PER_SECOND", "fast", /number > 0/],
    ["TESTBAY_AGENT_RATE_LIMIT_BURST", "0", /whole number ≥ 1/],
    ["TESTBAY_AGENT_RATE_LIMIT_PER_SECOND", "0", /number > 0/],
    ["TESTBAY_SUPPORT_EMAIL", "support", /e-mail address/],
    ["TESTBAY_LOCAL_AGENT", "maybe", /true or false/],
    ["TESTBAY_LOCAL_AGENT_SHELL", "on", /true or false/],
    ["TESTBAY_LEASE_TTL_SECONDS", "4", /seconds from 5 to 3600/],
    ["TESTBAY_LEASE_TTL_SECONDS", "3601", /seconds from 5 to 3600/],
    ["TESTBAY_LEASE_TTL_SECONDS", "1m", /seconds from 5 to 3600/],
    ["TESTBAY_BODY_IDLE_TIMEOUT_SECONDS", "0", /seconds from 1 to 3600/],
    ["TESTBAY_BODY_IDLE_TIMEOUT_SECONDS", "1.5", /seconds from 1 to 3600/],
    ["TESTBAY_LOG_LEVEL", "verbose", /one of fatal, error, warn, info, debug, trace, silent/],
    ["TESTBAY_WEBHOOK_RETRY_SCHEDULE", "5", /comma-separated list of waits such as 5s,30s/],
    ["TESTBAY_WEBHOOK_RETRY_SCHEDULE", "5s,,30s", /comma-separated list of waits/],
    ["TESTBAY_WEBHOOK_RETRY_SCHEDULE", "1y", /units ms, s, m, h, d/],
    ["TESTBAY_WEBHOOK_RETRY_SCHEDULE", "0s", /comma-separated list of waits/],
    ["TESTBAY_WEBHOOK_RETRY_SCHEDULE", "8d", /each at most 7d/],
    ["TESTBAY_WEBHOOK_ALLOW_PRIVATE", "sure", /true or false/],
  ])("%s=%s: names the variable, what it accepts and what it got", (name, value, accepts) => {
    const problems = problemsOf({ [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${name} must be `));
    expect(problems[0]).toMatch(accepts);
    expect(problems[0]).toContain(`; got ${JSON.stringify(value)}`);
  });

  it("reports every invalid variable at once, in a stable order, in the error message too", () => {
    let error: unknown;
    try {
      loadConfig({ TESTBAY_RATE_LIMIT_BURST: "0", TESTBAY_PORT: "abc", TESTBAY_DATABASE_URL: "mysql://x" });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { problems, message } = error as ConfigError;
    expect(problems.map((problem) => problem.split(" ")[0])).toEqual([
      "TESTBAY_PORT",
      "TESTBAY_DATABASE_URL",
      "TESTBAY_RATE_LIMIT_BURST",
    ]);
    for (const problem of problems) expect(message).toContain(problem);
  });
});

describe("loadConfig and TESTBAY_SIGNING_KEY", () => {
  it("accepts an Ed25519 private key in PEM form", () => {
    const pem = ed25519Pem();
    expect(loadConfig({ TESTBAY_SIGNING_KEY: pem }).signingKey).toBe(pem);
  });

  const rsaPem = () =>
    generateKeyPairSync("rsa", { modulusLength: 1024 })
      .privateKey.export({ type: "pkcs8", format: "pem" })
      .toString();
  const ed25519PublicPem = () =>
    generateKeyPairSync("ed25519").publicKey.export({ type: "spki", format: "pem" }).toString();

  it.each([
    ["garbage", () => "garbage-not-a-key"],
    ["an RSA private key", rsaPem],
    ["an Ed25519 public key", ed25519PublicPem],
  ])("rejects %s without ever echoing it", (_what, make) => {
    const value = make();
    let error: unknown;
    try {
      loadConfig({ TESTBAY_SIGNING_KEY: value });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { problems, message } = error as ConfigError;
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^TESTBAY_SIGNING_KEY must be an Ed25519 private key in PEM form/);
    expect(problems[0]).toContain("not shown");
    // Neither the value nor any line of it (the base64 body of a PEM) appears anywhere.
    const shown = `${message}\n${problems.join("\n")}`;
    for (const line of value.split("\n").filter((l) => l.length > 0)) expect(shown).not.toContain(line);
  });
});

describe("loadConfig and single sign-on (TESTBAY_OIDC_*)", () => {
  const trio = {
    TESTBAY_OIDC_ISSUER: "https://id.example.com/realms/main",
    TESTBAY_OIDC_CLIENT_ID: "testbay",
    TESTBAY_OIDC_CLIENT_SECRET: "s3cret-value-never-shown",
  };

  it("is on with issuer, client ID and secret; viewers in `default` unless told otherwise", () => {
    expect(loadConfig(trio).oidc).toEqual({
      issuer: trio.TESTBAY_OIDC_ISSUER,
      clientId: "testbay",
      clientSecret: trio.TESTBAY_OIDC_CLIENT_SECRET,
      defaultRole: "viewer",
      organization: "default",
      roleClaim: undefined,
    });
    expect(
      loadConfig({
        ...trio,
        TESTBAY_OIDC_DEFAULT_ROLE: "member",
        TESTBAY_OIDC_ORG: "acme",
        TESTBAY_OIDC_ROLE_CLAIM: "testbay_role",
      }).oidc,
    ).toMatchObject({ defaultRole: "member", organization: "acme", roleClaim: "testbay_role" });
  });

  it("names the missing parts of a half setup, and never shows the secret", () => {
    const problems = problemsOf({ TESTBAY_OIDC_CLIENT_SECRET: trio.TESTBAY_OIDC_CLIENT_SECRET });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^TESTBAY_OIDC_ISSUER and TESTBAY_OIDC_CLIENT_ID must be set too/);
    expect(problems.join("\n")).not.toContain(trio.TESTBAY_OIDC_CLIENT_SECRET);
  });

  it("takes plain HTTP only for a provider on this machine", () => {
    const local = loadConfig({ ...trio, TESTBAY_OIDC_ISSUER: "http://127.0.0.1:9000" });
    expect(local.oidc?.issuer).toBe("http://127.0.0.1:9000");
    expect(problemsOf({ ...trio, TESTBAY_OIDC_ISSUER: "http://id.example.com" })[0]).toMatch(
      /^TESTBAY_OIDC_ISSUER must be the provider's https:\/\/ issuer URL/,
    );
  });

  it("rejects an unknown default role", () => {
    expect(problemsOf({ ...trio, TESTBAY_OIDC_DEFAULT_ROLE: "owner" })).toEqual([
      'TESTBAY_OIDC_DEFAULT_ROLE must be one of viewer, member, admin; got "owner"',
    ]);
  });
});

describe("loadConfig never shows a password it rejects", () => {
  const secret = "hunter2-Secret";
  it.each([
    [
      "TESTBAY_DATABASE_URL",
      `mysql://root:${secret}@db.example.com/testbay`,
      "mysql://root:***@db.example.com/testbay",
    ],
    [
      "TESTBAY_DATABASE_URL",
      `mysql://root:${secret}@db/x?password=${secret}`,
      "mysql://root:***@db/x?password=***",
    ],
    ["TESTBAY_REDIS_URL", `http://:${secret}@cache:6379`, "http://:***@cache:6379"],
    ["TESTBAY_REDIS_URL", `cache:6379?password=${secret}`, "cache:6379?password=***"],
    [
      "TESTBAY_STORAGE_URL",
      `s3://blobs?region=us-east-1&secret_access_key=${secret}`,
      "s3://blobs?region=us-east-1&secret_access_key=***",
    ],
    ["TESTBAY_STORAGE_URL", `s3://AKIAEXAMPLE:${secret}@blobs`, "s3://***@blobs"],
    [
      "TESTBAY_STORAGE_URL",
      `s3://blobs?endpoint=http://minio:${secret}@host:9000`,
      "s3://blobs?endpoint=http://minio:***@host:9000",
    ],
    [
      "TESTBAY_PUBLIC_URL",
      `https://admin:${secret}@testbay.example.com/`,
      "https://admin:***@testbay.example.com/",
    ],
  ])("%s=%s is named, shown with the password as ***", (name, value, shown) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { problems, message } = error as ConfigError;
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${name} `));
    expect(problems[0]).toContain(`; got ${JSON.stringify(shown)}`);
    expect(`${message}\n${problems.join("\n")}`).not.toContain(secret);
  });
});

describe("unknownVariables", () => {
  it("flags a TESTBAY_ variable the server does not read, such as a typo", () => {
    expect(unknownVariables({ TESTBAY_PROT: "9", TESTBAY_PORT: "9" })).toEqual(["TESTBAY_PROT"]);
    expect(unknownVariables({ TESTBAY_DATABASE: "x", TESTBAY_SIGNING_KEY_FILE: "x" })).toEqual([
      "TESTBAY_DATABASE",
      "TESTBAY_SIGNING_KEY_FILE",
    ]);
  });

  it("leaves alone the server's settings, the client's and agent's variables, the tests' and other programs'", () => {
    const env = {
      ...Object.fromEntries(settings.map((name) => [name, "x"])),
      TESTBAY_URL: "http://127.0.0.1:8080/v1",
      TESTBAY_CLIENT_ID: "cl_x",
      TESTBAY_CLIENT_SECRET: "tbs_x",
      TESTBAY_TOKEN: "eyJ…",
      TESTBAY_TEST_DB: "postgres",
      TESTBAY_TEST_POSTGRES_URL: "postgres://postgres@127.0.0.1/test",
      PATH: "/usr/bin",
      MY_TESTBAY_THING: "x",
    };
    expect(unknownVariables(env)).toEqual([]);
  });
});
