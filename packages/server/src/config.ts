import { createPrivateKey } from "node:crypto";
import path from "node:path";
import ipaddr from "ipaddr.js";
import { type StaticDecode, type TSchema, Type } from "typebox";
import Value from "typebox/value";
import { redactConnectionUrl } from "./redact-connection-url.ts";
import { parseS3Url, S3UrlError } from "./storage/s3-url.ts";

/**
 * Everything the server can be told, read once from `TESTBAY_*` environment variables.
 * This module is the only reader of `process.env` in the server.
 */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** `sqlite:<file>` or `postgres://…` */
  databaseUrl: string;
  redisUrl: string | undefined;
  /** How long a rate-limit command to Redis may take before the request is let through (fail open). */
  redisCommandTimeoutMs: number;
  /** `file:<dir>` or `s3://bucket?…` */
  storageUrl: string;
  /** The base URL clients use (`…/v1`); derived from host and port unless TESTBAY_PUBLIC_URL is set. */
  publicUrl: string | undefined;
  /**
   * How the other API instances reach this one (an origin, no `/v1`): where they forward WebDriver commands for
   * agents whose channel this instance holds (docs/appium-relay.md). Undefined: `http://<host>:<bound port>`,
   * known once the server listens (features/sessions/channel/instance-url.ts).
   */
  instanceUrl: string | undefined;
  audience: string;
  maxUploadBytes: number;
  /** Per execution: past it, log lines are dropped after one marker line. */
  maxExecutionLogBytes: number;
  rateLimit: RateLimitSettings;
  agentRateLimit: RateLimitSettings;
  supportEmail: string | undefined;
  /** PEM of an Ed25519 private key; undefined means "generate once and keep it in the database". */
  signingKey: string | undefined;
  localAgent: boolean;
  localAgentShell: boolean;
  leaseTtlSeconds: number;
  /**
   * Retention: each app keeps its newest this many versions; older ones (binary, test package) are deleted
   * hourly unless an execution of them is queued or running. Undefined: versions are kept until deleted.
   */
  keepVersions: number | undefined;
  /** A request body that sends no byte for this long is cut off and its staging file removed. */
  bodyIdleTimeoutSeconds: number;
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  /** `pretty`: one human-readable line per event (pino-pretty); `json`: one JSON object per line; `auto`: pretty on a terminal. */
  logFormat: "auto" | "json" | "pretty";
  /** Single sign-on (API.md §10): set when TESTBAY_OIDC_ISSUER, _CLIENT_ID and _CLIENT_SECRET all are. */
  oidc: OidcSettings | undefined;
  /** Webhook deliveries (API.md §9): the waits between attempts, in milliseconds; when spent, the endpoint is disabled. */
  webhookRetryScheduleMs: number[];
  /** Lets webhooks reach loopback, private and link-local addresses (on-premises receivers, tests). */
  webhookAllowPrivate: boolean;
  /**
   * The reverse proxies (addresses and CIDR ranges) whose X-Forwarded-For and X-Forwarded-Proto are believed:
   * Fastify's `trustProxy` (app.ts). Empty: the caller's address is the connection's, whatever it claims.
   */
  trustedProxies: string[];
  /** How often each instance looks for due scheduled runs (API.md §15, features/schedules), in milliseconds. */
  schedulesTickMs: number;
  /**
   * Prometheus metrics at GET /metrics (API.md §15, features/metrics): served when `enabled`; with `token` set,
   * only to scrapes sending `Authorization: Bearer <token>`.
   */
  metrics: { enabled: boolean; token: string | undefined };
}

export type OidcRole = "viewer" | "member" | "admin";

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The role of a person the provider signs in for the first time, unless the role claim says otherwise. */
  defaultRole: OidcRole;
  /** The organization (by name) people signing in this way are created in. */
  organization: string;
  /** A claim whose value (viewer, member or admin) sets the person's role at every sign-in. */
  roleClaim: string | undefined;
}

export interface RateLimitSettings {
  burst: number;
  perSecond: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/** What is wrong with a variable's value, said as the rule it breaks (`must be …`); undefined when nothing is. */
type Problem = (raw: string) => string | undefined;

/** A check and the rule it enforces, said when the value breaks it. */
const rule =
  (accepts: (raw: string) => boolean, message: string): Problem =>
  (raw) =>
    accepts(raw) ? undefined : message;

/**
 * One variable as a TypeBox schema of its raw text: a Refine that says what is wrong with it and how to write it
 * (Value.Errors reports it), and a Decode into the value the server uses (Value.Decode applies it). TypeBox, as
 * the routes' schemas: one schema library in the server.
 */
const variable = <T>(problem: Problem, decode: (raw: string) => T) =>
  Type.Decode(
    Type.Refine(
      Type.String(),
      (raw) => problem(raw) === undefined,
      (raw) => problem(raw) ?? "is invalid",
    ),
    decode,
  );

/** A variable that may be left unset: `fallback` is its value then (undefined: no value). */
interface Setting<S extends TSchema = TSchema, F = unknown> {
  schema: S;
  fallback: F;
}

const setting = <S extends TSchema, const F = undefined>(schema: S, fallback?: F): Setting<S, F> => ({
  schema,
  fallback: fallback as F,
});

const text = (message: string) =>
  variable(
    rule((raw) => raw.length > 0, message),
    (raw) => raw,
  );

/** Whole numbers written plainly: "0x10", "1e3" or "12abc" are mistakes, not 16, 1000 or 12. */
const wholeNumber = (what: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  variable(
    rule((raw) => /^\d+$/.test(raw) && Number(raw) >= min && Number(raw) <= max, `must be ${what}`),
    Number,
  );

const positiveInt = (what: string, max = Number.MAX_SAFE_INTEGER) => wholeNumber(what, 1, max);

const positiveDecimal = variable(
  rule((raw) => /^\d+(\.\d+)?$/.test(raw) && Number(raw) > 0, "must be a number > 0"),
  Number,
);

const oneOf = <const Values extends readonly string[]>(values: Values) =>
  variable(
    rule((raw) => values.includes(raw), `must be one of ${values.join(", ")}`),
    (raw) => raw as Values[number],
  );

const bool = variable(
  rule((raw) => ["true", "false", "1", "0", "yes", "no"].includes(raw), "must be true or false"),
  (raw) => raw === "true" || raw === "1" || raw === "yes",
);

/**
 * An http(s) URL, written with its `//` (`http:example.com` is a mistake), leading and trailing blanks ignored:
 * the rule zod's z.url({ protocol: /^https?$/ }) applied to these variables before they moved to TypeBox.
 */
const isHttpUrl = (raw: string) => /^https?:\/\//i.test(raw.trim()) && URL.canParse(raw.trim());

/** Scheme, host and port only: what another instance prefixes paths with. */
const isOrigin = (url: URL) => url.pathname === "/" && url.search === "" && url.hash === "" && !url.username;

/** The address form zod's z.email() accepted, kept so that an address accepted before still is. */
const emailAddress =
  /^(?:[A-Za-z0-9_'+-]+\.)*[A-Za-z0-9_'+-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9-]*\.)+[A-Za-z]{2,}$/;

const databaseUrl = variable(
  rule(
    (raw) => /^(sqlite:.|postgres:\/\/|postgresql:\/\/)/.test(raw),
    // No user@ in the example: messages pass through the connection-URL redactor, which would hide it.
    "must be sqlite:<file> or postgres://host:port/database (user and password before the host when needed)",
  ),
  (raw) => raw,
);

const storageUrl = variable(
  (raw) => {
    if (!/^(file:|s3:\/\/)/.test(raw)) return "must be file:<directory> or s3://bucket?endpoint=…";
    if (!raw.startsWith("s3:")) return undefined;
    try {
      parseS3Url(raw);
      return undefined;
    } catch (error) {
      if (!(error instanceof S3UrlError)) throw error;
      return error.message;
    }
  },
  (raw) => raw,
);

const signingKey = variable(
  rule((pem) => {
    try {
      return createPrivateKey(pem).asymmetricKeyType === "ed25519";
    } catch {
      return false;
    }
  }, "must be an Ed25519 private key in PEM form (openssl genpkey -algorithm ed25519)"),
  (pem) => pem,
);

/**
 * The provider is reached over HTTPS; plain HTTP only on this machine (a provider run beside the server, or
 * in tests), where nobody on the network can read the client secret or the tokens.
 */
const oidcIssuer = variable(
  rule((raw) => {
    if (!isHttpUrl(raw)) return false;
    const url = new URL(raw.trim());
    return url.protocol === "https:" || ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
  }, "must be the provider's https:// issuer URL (http:// only for 127.0.0.1 or localhost)"),
  (raw) => raw.trim(),
);

/** `5s`, `30s`, `2m`, `1h`: the units a retry schedule is written in, in milliseconds. */
const durationUnits: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * TESTBAY_WEBHOOK_RETRY_SCHEDULE: how long to wait before each retry of a failed delivery, in milliseconds.
 * Bounded so that a typo ("5" without a unit, "1y") is an error at start, not a delivery retried forever or
 * never. Undefined when the schedule breaks the rule.
 */
function retryWaits(value: string): number[] | undefined {
  const waits = value.split(",").map((part) => {
    const match = /^\s*(\d+)(ms|s|m|h|d)\s*$/.exec(part);
    return match ? Number(match[1]) * (durationUnits[match[2] as string] as number) : Number.NaN;
  });
  const valid =
    waits.length >= 1 &&
    waits.length <= 50 &&
    waits.every((ms) => Number.isSafeInteger(ms) && ms > 0 && ms <= 7 * 86_400_000);
  return valid ? waits : undefined;
}

const retrySchedule = variable(
  rule(
    (raw) => retryWaits(raw) !== undefined,
    "must be a comma-separated list of waits such as 5s,30s,2m,10m,30m,1h (units ms, s, m, h, d; 1 to 50 waits, each at most 7d)",
  ),
  (raw) => retryWaits(raw) as number[],
);

/**
 * TESTBAY_TRUSTED_PROXIES: comma-separated IP addresses and CIDR ranges (`10.0.0.5,10.1.0.0/16,::1`), the
 * reverse proxies in front of the server. Only a request arriving from one of them has its client address
 * taken from X-Forwarded-For (and its scheme from X-Forwarded-Proto); anyone else could write those headers.
 */
const proxyEntries = (value: string) =>
  value
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");

const trustedProxies = variable((raw) => {
  const wrong = proxyEntries(raw).find((entry) => !(ipaddr.isValid(entry) || isCidr(entry)));
  return wrong === undefined
    ? undefined
    : `must be comma-separated IP addresses or CIDR ranges, e.g. 10.0.0.5,10.1.0.0/16; ${JSON.stringify(wrong)} is neither`;
}, proxyEntries);

function isCidr(entry: string): boolean {
  try {
    ipaddr.parseCIDR(entry);
    return true;
  } catch {
    return false;
  }
}

/** Variables whose values are never repeated in a configuration error. */
const secretVariables = new Set([
  "TESTBAY_SIGNING_KEY",
  "TESTBAY_OIDC_CLIENT_SECRET",
  "TESTBAY_METRICS_TOKEN",
]);

const instanceUrlRule =
  "must be the http(s) origin other instances reach this one at, with no path, e.g. http://10.0.0.5:8080";

const publicUrlRule = "must be an http(s) URL ending in /v1, e.g. https://testbay.example.com/v1";

/** Variable name → its rule and its value when unset. Order is the order problems are reported in. */
const variables = {
  TESTBAY_PORT: setting(wholeNumber("a port number 0–65535", 0, 65535), 8080),
  TESTBAY_HOST: setting(text("must be a host name or IP address"), "127.0.0.1"),
  TESTBAY_DATA_DIR: setting(text("must be a directory path"), "./.testbay"),
  TESTBAY_DATABASE_URL: setting(databaseUrl),
  TESTBAY_REDIS_URL: setting(
    variable(
      rule((raw) => /^rediss?:\/\//.test(raw), "must be redis://host:port or rediss://…"),
      (raw) => raw,
    ),
  ),
  TESTBAY_STORAGE_URL: setting(storageUrl),
  TESTBAY_PUBLIC_URL: setting(
    variable(
      rule((raw) => isHttpUrl(raw) && /\/v1\/?$/.test(raw.trim()), publicUrlRule),
      (raw) => raw.trim(),
    ),
  ),
  TESTBAY_INSTANCE_URL: setting(
    variable(
      rule((raw) => isHttpUrl(raw) && isOrigin(new URL(raw.trim())), instanceUrlRule),
      (raw) => raw.trim().replace(/\/+$/, ""),
    ),
  ),
  TESTBAY_AUDIENCE: setting(text("must be a non-empty string"), "testbay"),
  TESTBAY_MAX_UPLOAD_BYTES: setting(positiveInt("a whole number of bytes ≥ 1"), 524_288_000),
  TESTBAY_MAX_EXECUTION_LOG_BYTES: setting(positiveInt("a whole number of bytes ≥ 1"), 104_857_600),
  TESTBAY_RATE_LIMIT_BURST: setting(positiveInt("a whole number ≥ 1"), 20),
  TESTBAY_RATE_LIMIT_PER_SECOND: setting(positiveDecimal, 4),
  TESTBAY_AGENT_RATE_LIMIT_BURST: setting(positiveInt("a whole number ≥ 1"), 200),
  TESTBAY_AGENT_RATE_LIMIT_PER_SECOND: setting(positiveDecimal, 50),
  TESTBAY_SUPPORT_EMAIL: setting(
    variable(
      rule((raw) => emailAddress.test(raw), "must be an e-mail address"),
      (raw) => raw,
    ),
  ),
  TESTBAY_SIGNING_KEY: setting(signingKey),
  TESTBAY_LOCAL_AGENT: setting(bool, true),
  TESTBAY_LOCAL_AGENT_SHELL: setting(bool, false),
  TESTBAY_LEASE_TTL_SECONDS: setting(wholeNumber("a whole number of seconds from 5 to 3600", 5, 3600), 60),
  TESTBAY_REDIS_COMMAND_TIMEOUT_MS: setting(
    wholeNumber("a whole number of milliseconds from 10 to 60000", 10, 60_000),
    200,
  ),
  TESTBAY_KEEP_VERSIONS: setting(positiveInt("a whole number of versions ≥ 1 to keep per app")),
  TESTBAY_BODY_IDLE_TIMEOUT_SECONDS: setting(
    wholeNumber("a whole number of seconds from 1 to 3600", 1, 3600),
    60,
  ),
  TESTBAY_LOG_LEVEL: setting(oneOf(["fatal", "error", "warn", "info", "debug", "trace", "silent"]), "info"),
  TESTBAY_LOG_FORMAT: setting(oneOf(["auto", "json", "pretty"]), "auto"),
  TESTBAY_OIDC_ISSUER: setting(oidcIssuer),
  TESTBAY_OIDC_CLIENT_ID: setting(text("must not be empty")),
  TESTBAY_OIDC_CLIENT_SECRET: setting(text("must not be empty")),
  TESTBAY_OIDC_DEFAULT_ROLE: setting(oneOf(["viewer", "member", "admin"]), "viewer"),
  TESTBAY_OIDC_ORG: setting(text("must not be empty"), "default"),
  TESTBAY_OIDC_ROLE_CLAIM: setting(text("must not be empty")),
  TESTBAY_WEBHOOK_RETRY_SCHEDULE: setting(
    retrySchedule,
    // About 24 hours in all, as Standard Webhooks senders do (API.md §9).
    [5, 30, 120, 600, 1800, 3600, 7200, 14_400, 28_800, 28_800].map((seconds) => seconds * 1000),
  ),
  TESTBAY_WEBHOOK_ALLOW_PRIVATE: setting(bool, false),
  TESTBAY_TRUSTED_PROXIES: setting(trustedProxies, [] as string[]),
  TESTBAY_SCHEDULES_TICK_MS: setting(
    wholeNumber("a whole number of milliseconds from 10 to 3600000", 10, 3_600_000),
    15_000,
  ),
  TESTBAY_METRICS: setting(bool, false),
  TESTBAY_METRICS_TOKEN: setting(text("must not be empty")),
};

type Values = {
  [K in keyof typeof variables]:
    | StaticDecode<(typeof variables)[K]["schema"]>
    | (typeof variables)[K]["fallback"];
};

const oidcTrio = ["TESTBAY_OIDC_ISSUER", "TESTBAY_OIDC_CLIENT_ID", "TESTBAY_OIDC_CLIENT_SECRET"] as const;

const knownNames = new Set(Object.keys(variables));

/**
 * Reads and validates the configuration. Throws a ConfigError that names every wrong variable, what it
 * accepts and what it got, so a misconfigured server stops at once with a message that says how to fix it.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  for (const [name, { schema, fallback }] of Object.entries(variables) as Array<[string, Setting]>) {
    const raw = env[name];
    // An empty or blank variable (`TESTBAY_X=`) means "not set", as in most shells' and CI systems' conventions.
    const value = raw?.trim() === "" ? undefined : raw;
    const error = value === undefined ? undefined : Value.Errors(schema, value)[0];
    if (error === undefined) values[name] = value === undefined ? fallback : Value.Decode(schema, value);
    else {
      // Messages may quote part of the value (an S3 endpoint): both pass through the same redaction.
      const message = redactConnectionUrl(error.message);
      const shown = secretVariables.has(name)
        ? "(not shown: it is a secret)"
        : JSON.stringify(raw === undefined ? raw : redactConnectionUrl(raw));
      problems.push(`${name} ${message}; got ${shown}`);
    }
  }
  // Half a single sign-on setup is a mistake, not "off": say which parts are missing.
  const oidcSet = oidcTrio.filter((name) => env[name] !== undefined && env[name]?.trim() !== "");
  if (oidcSet.length > 0 && oidcSet.length < oidcTrio.length) {
    const missing = oidcTrio.filter((name) => !oidcSet.includes(name));
    problems.push(
      `${missing.join(" and ")} must be set too: single sign-on needs TESTBAY_OIDC_ISSUER, TESTBAY_OIDC_CLIENT_ID and TESTBAY_OIDC_CLIENT_SECRET (or none of them)`,
    );
  }
  // A token for metrics that are not served is a half-done setup: say so rather than serve nothing quietly.
  if (env.TESTBAY_METRICS_TOKEN?.trim() && values.TESTBAY_METRICS === false) {
    problems.push(
      "TESTBAY_METRICS_TOKEN is set but TESTBAY_METRICS is not true: set TESTBAY_METRICS=true to serve GET /metrics, or unset the token",
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const v = values as Values;
  const dataDir = path.resolve(v.TESTBAY_DATA_DIR);
  return {
    port: v.TESTBAY_PORT,
    host: v.TESTBAY_HOST,
    dataDir,
    databaseUrl: v.TESTBAY_DATABASE_URL ?? `sqlite:${path.join(dataDir, "testbay.db")}`,
    redisUrl: v.TESTBAY_REDIS_URL,
    redisCommandTimeoutMs: v.TESTBAY_REDIS_COMMAND_TIMEOUT_MS,
    storageUrl: v.TESTBAY_STORAGE_URL ?? `file:${path.join(dataDir, "blobs")}`,
    publicUrl: v.TESTBAY_PUBLIC_URL?.replace(/\/+$/, ""),
    instanceUrl: v.TESTBAY_INSTANCE_URL,
    audience: v.TESTBAY_AUDIENCE,
    maxUploadBytes: v.TESTBAY_MAX_UPLOAD_BYTES,
    maxExecutionLogBytes: v.TESTBAY_MAX_EXECUTION_LOG_BYTES,
    rateLimit: { burst: v.TESTBAY_RATE_LIMIT_BURST, perSecond: v.TESTBAY_RATE_LIMIT_PER_SECOND },
    agentRateLimit: {
      burst: v.TESTBAY_AGENT_RATE_LIMIT_BURST,
      perSecond: v.TESTBAY_AGENT_RATE_LIMIT_PER_SECOND,
    },
    supportEmail: v.TESTBAY_SUPPORT_EMAIL,
    signingKey: v.TESTBAY_SIGNING_KEY,
    localAgent: v.TESTBAY_LOCAL_AGENT,
    localAgentShell: v.TESTBAY_LOCAL_AGENT_SHELL,
    leaseTtlSeconds: v.TESTBAY_LEASE_TTL_SECONDS,
    keepVersions: v.TESTBAY_KEEP_VERSIONS,
    bodyIdleTimeoutSeconds: v.TESTBAY_BODY_IDLE_TIMEOUT_SECONDS,
    logLevel: v.TESTBAY_LOG_LEVEL,
    logFormat: v.TESTBAY_LOG_FORMAT,
    oidc:
      v.TESTBAY_OIDC_ISSUER && v.TESTBAY_OIDC_CLIENT_ID && v.TESTBAY_OIDC_CLIENT_SECRET
        ? {
            issuer: v.TESTBAY_OIDC_ISSUER,
            clientId: v.TESTBAY_OIDC_CLIENT_ID,
            clientSecret: v.TESTBAY_OIDC_CLIENT_SECRET,
            defaultRole: v.TESTBAY_OIDC_DEFAULT_ROLE,
            organization: v.TESTBAY_OIDC_ORG,
            roleClaim: v.TESTBAY_OIDC_ROLE_CLAIM,
          }
        : undefined,
    webhookRetryScheduleMs: v.TESTBAY_WEBHOOK_RETRY_SCHEDULE,
    webhookAllowPrivate: v.TESTBAY_WEBHOOK_ALLOW_PRIVATE,
    trustedProxies: v.TESTBAY_TRUSTED_PROXIES,
    schedulesTickMs: v.TESTBAY_SCHEDULES_TICK_MS,
    metrics: { enabled: v.TESTBAY_METRICS, token: v.TESTBAY_METRICS_TOKEN },
  };
}

/** `TESTBAY_*` variables that are set but mean nothing to the server: most often a typo worth a warning. */
export function unknownVariables(env: NodeJS.ProcessEnv = process.env): string[] {
  // The client and agent read these; they may well be set in the same shell.
  const clientSide = new Set(["TESTBAY_URL", "TESTBAY_CLIENT_ID", "TESTBAY_CLIENT_SECRET", "TESTBAY_TOKEN"]);
  const testSide = /^TESTBAY_TEST_/;
  return Object.keys(env).filter(
    (name) =>
      name.startsWith("TESTBAY_") && !knownNames.has(name) && !clientSide.has(name) && !testSide.test(name),
  );
}
