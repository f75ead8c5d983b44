import { createPrivateKey } from "node:crypto";
import path from "node:path";
import ipaddr from "ipaddr.js";
import { z } from "zod";
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
  /** `file:<dir>` or `s3://bucket?…` */
  storageUrl: string;
  /** The base URL clients use (`…/v1`); derived from host and port unless TESTBAY_PUBLIC_URL is set. */
  publicUrl: string | undefined;
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

/** Whole numbers written plainly: "0x10", "1e3" or "12abc" are mistakes, not 16, 1000 or 12. */
const wholeNumber = (what: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^\d+$/, { error: `must be ${what}` })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, { error: `must be ${what}` })
        .max(max, { error: `must be ${what}` }),
    );

const positiveInt = (what: string, max = Number.MAX_SAFE_INTEGER) => wholeNumber(what, 1, max);

const positiveDecimal = z
  .string()
  .regex(/^\d+(\.\d+)?$/, { error: "must be a number > 0" })
  .transform(Number)
  .pipe(z.number().positive({ error: "must be a number > 0" }));

const bool = z
  .enum(["true", "false", "1", "0", "yes", "no"], { error: "must be true or false" })
  .transform((v) => v === "true" || v === "1" || v === "yes");

const databaseUrl = z.string().refine((v) => /^(sqlite:.|postgres:\/\/|postgresql:\/\/)/.test(v), {
  // No user@ in the example: messages pass through the connection-URL redactor, which would hide it.
  error:
    "must be sqlite:<file> or postgres://host:port/database (user and password before the host when needed)",
});

const storageUrl = z.string().superRefine((v, ctx) => {
  if (!/^(file:|s3:\/\/)/.test(v)) {
    ctx.addIssue({ code: "custom", message: "must be file:<directory> or s3://bucket?endpoint=…" });
    return;
  }
  if (!v.startsWith("s3:")) return;
  try {
    parseS3Url(v);
  } catch (error) {
    if (!(error instanceof S3UrlError)) throw error;
    ctx.addIssue({ code: "custom", message: error.message });
  }
});

const signingKey = z.string().refine(
  (pem) => {
    try {
      return createPrivateKey(pem).asymmetricKeyType === "ed25519";
    } catch {
      return false;
    }
  },
  { error: "must be an Ed25519 private key in PEM form (openssl genpkey -algorithm ed25519)" },
);

/**
 * The provider is reached over HTTPS; plain HTTP only on this machine (a provider run beside the server, or
 * in tests), where nobody on the network can read the client secret or the tokens.
 */
const oidcIssuerRule = "must be the provider's https:// issuer URL (http:// only for 127.0.0.1 or localhost)";
const oidcIssuer = z.url({ protocol: /^https?$/, error: oidcIssuerRule }).refine(
  (v) => {
    const url = new URL(v);
    return url.protocol === "https:" || ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
  },
  { error: oidcIssuerRule },
);

const oidcRole = z.enum(["viewer", "member", "admin"], { error: "must be one of viewer, member, admin" });

/** `5s`, `30s`, `2m`, `1h`: the units a retry schedule is written in, in milliseconds. */
const durationUnits: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

const retryScheduleRule =
  "must be a comma-separated list of waits such as 5s,30s,2m,10m,30m,1h (units ms, s, m, h, d; 1 to 50 waits, each at most 7d)";

/**
 * TESTBAY_WEBHOOK_RETRY_SCHEDULE: how long to wait before each retry of a failed delivery. Bounded so that a
 * typo ("5" without a unit, "1y") is an error at start, not a delivery retried forever or never.
 */
const retrySchedule = z.string().transform((value, ctx) => {
  const waits = value.split(",").map((part) => {
    const match = /^\s*(\d+)(ms|s|m|h|d)\s*$/.exec(part);
    return match ? Number(match[1]) * (durationUnits[match[2] as string] as number) : Number.NaN;
  });
  const valid =
    waits.length >= 1 &&
    waits.length <= 50 &&
    waits.every((ms) => Number.isSafeInteger(ms) && ms > 0 && ms <= 7 * 86_400_000);
  if (!valid) {
    ctx.addIssue({ code: "custom", message: retryScheduleRule });
    return z.NEVER;
  }
  return waits;
});

/**
 * TESTBAY_TRUSTED_PROXIES: comma-separated IP addresses and CIDR ranges (`10.0.0.5,10.1.0.0/16,::1`), the
 * reverse proxies in front of the server. Only a request arriving from one of them has its client address
 * taken from X-Forwarded-For (and its scheme from X-Forwarded-Proto); anyone else could write those headers.
 */
const trustedProxies = z.string().transform((value, context) => {
  const entries = value
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  const wrong = entries.find((entry) => !(ipaddr.isValid(entry) || isCidr(entry)));
  if (wrong !== undefined) {
    context.addIssue({
      code: "custom",
      message: `must be comma-separated IP addresses or CIDR ranges, e.g. 10.0.0.5,10.1.0.0/16; ${JSON.stringify(wrong)} is neither`,
    });
    return z.NEVER;
  }
  return entries;
});

function isCidr(entry: string): boolean {
  try {
    ipaddr.parseCIDR(entry);
    return true;
  } catch {
    return false;
  }
}

/** Variables whose values are never repeated in a configuration error. */
const secretVariables = new Set(["TESTBAY_SIGNING_KEY", "TESTBAY_OIDC_CLIENT_SECRET"]);

const publicUrlRule = "must be an http(s) URL ending in /v1, e.g. https://testbay.example.com/v1";

/** Variable name → schema and default. Order is the order problems are reported in. */
const variables = {
  TESTBAY_PORT: wholeNumber("a port number 0–65535", 0, 65535).default(8080),
  TESTBAY_HOST: z.string().min(1, { error: "must be a host name or IP address" }).default("127.0.0.1"),
  TESTBAY_DATA_DIR: z.string().min(1, { error: "must be a directory path" }).default("./.testbay"),
  TESTBAY_DATABASE_URL: databaseUrl.optional(),
  TESTBAY_REDIS_URL: z
    .string()
    .refine((v) => /^rediss?:\/\//.test(v), { error: "must be redis://host:port or rediss://…" })
    .optional(),
  TESTBAY_STORAGE_URL: storageUrl.optional(),
  TESTBAY_PUBLIC_URL: z
    .url({ protocol: /^https?$/, error: publicUrlRule })
    .refine((v) => /\/v1\/?$/.test(v), { error: publicUrlRule })
    .optional(),
  TESTBAY_AUDIENCE: z.string().min(1, { error: "must be a non-empty string" }).default("testbay"),
  TESTBAY_MAX_UPLOAD_BYTES: positiveInt("a whole number of bytes ≥ 1").default(524_288_000),
  TESTBAY_MAX_EXECUTION_LOG_BYTES: positiveInt("a whole number of bytes ≥ 1").default(104_857_600),
  TESTBAY_RATE_LIMIT_BURST: positiveInt("a whole number ≥ 1").default(20),
  TESTBAY_RATE_LIMIT_PER_SECOND: positiveDecimal.default(4),
  TESTBAY_AGENT_RATE_LIMIT_BURST: positiveInt("a whole number ≥ 1").default(200),
  TESTBAY_AGENT_RATE_LIMIT_PER_SECOND: positiveDecimal.default(50),
  TESTBAY_SUPPORT_EMAIL: z.email({ error: "must be an e-mail address" }).optional(),
  TESTBAY_SIGNING_KEY: signingKey.optional(),
  TESTBAY_LOCAL_AGENT: bool.default(true),
  TESTBAY_LOCAL_AGENT_SHELL: bool.default(false),
  TESTBAY_LEASE_TTL_SECONDS: wholeNumber("a whole number of seconds from 5 to 3600", 5, 3600).default(60),
  TESTBAY_KEEP_VERSIONS: positiveInt("a whole number of versions ≥ 1 to keep per app").optional(),
  TESTBAY_BODY_IDLE_TIMEOUT_SECONDS: wholeNumber("a whole number of seconds from 1 to 3600", 1, 3600).default(
    60,
  ),
  TESTBAY_LOG_LEVEL: z
    .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"], {
      error: "must be one of fatal, error, warn, info, debug, trace, silent",
    })
    .default("info"),
  TESTBAY_LOG_FORMAT: z
    .enum(["auto", "json", "pretty"], { error: "must be one of auto, json, pretty" })
    .default("auto"),
  TESTBAY_OIDC_ISSUER: oidcIssuer.optional(),
  TESTBAY_OIDC_CLIENT_ID: z.string().min(1).optional(),
  TESTBAY_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  TESTBAY_OIDC_DEFAULT_ROLE: oidcRole.default("viewer"),
  TESTBAY_OIDC_ORG: z.string().min(1).default("default"),
  TESTBAY_OIDC_ROLE_CLAIM: z.string().min(1).optional(),
  TESTBAY_WEBHOOK_RETRY_SCHEDULE: retrySchedule.default(
    // About 24 hours in all, as Standard Webhooks senders do (API.md §9).
    [5, 30, 120, 600, 1800, 3600, 7200, 14_400, 28_800, 28_800].map((seconds) => seconds * 1000),
  ),
  TESTBAY_WEBHOOK_ALLOW_PRIVATE: bool.default(false),
  TESTBAY_TRUSTED_PROXIES: trustedProxies.default([]),
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
  for (const [name, schema] of Object.entries(variables)) {
    const raw = env[name];
    // An empty or blank variable (`TESTBAY_X=`) means "not set", as in most shells' and CI systems' conventions.
    const value = raw?.trim() === "" ? undefined : raw;
    const result = (schema as z.ZodType).safeParse(value);
    if (result.success) values[name] = result.data;
    else {
      // Messages may quote part of the value (an S3 endpoint): both pass through the same redaction.
      const message = redactConnectionUrl(result.error.issues[0]?.message ?? "is invalid");
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
  if (problems.length > 0) throw new ConfigError(problems);

  const v = values as { [K in keyof typeof variables]: z.output<(typeof variables)[K]> };
  const dataDir = path.resolve(v.TESTBAY_DATA_DIR);
  return {
    port: v.TESTBAY_PORT,
    host: v.TESTBAY_HOST,
    dataDir,
    databaseUrl: v.TESTBAY_DATABASE_URL ?? `sqlite:${path.join(dataDir, "testbay.db")}`,
    redisUrl: v.TESTBAY_REDIS_URL,
    storageUrl: v.TESTBAY_STORAGE_URL ?? `file:${path.join(dataDir, "blobs")}`,
    publicUrl: v.TESTBAY_PUBLIC_URL?.replace(/\/+$/, ""),
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
