import { randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { type AgentApi, agentApi } from "./agent-api.ts";
import { type Clock, type Random, systemClock } from "./clock.ts";
import { TestbayApiError } from "./errors.ts";
import { expectContinueFetch } from "./expect-continue.ts";
import type {
  Agent,
  App,
  AppVersion,
  Artifact,
  BatchTriggerRequest,
  BatchTriggerResult,
  CreateApp,
  CreatedWebhook,
  CreateTestPlan,
  CreateWebhook,
  Execution,
  ExecutionQuery,
  Page,
  PageQuery,
  PatchTestPlan,
  Quarantine,
  RotatedWebhookSecret,
  TestCase,
  TestCaseQuery,
  TestPackage,
  TestPlan,
  TestPlanQuery,
  TriggerRequest,
  TriggerResult,
  UpdateWebhook,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryAccepted,
  WhoAmI,
} from "./models.ts";
import { defaultPacingPolicy, Pacer, type PacingPolicy } from "./pacing.ts";
import { type RetryEvent, type RetryOptions, RetryPolicy } from "./retry-policy.ts";
import { TokenCache, type TokenResponse } from "./token-cache.ts";
import { type CallOptions, type FetchLike, type ResponseEvent, segment, Transport } from "./transport.ts";
import {
  type TestPackageUploadOptions,
  type TestPackageUploadResult,
  type UploadOptions,
  type UploadResult,
  uploadTestPackage,
  uploadVersion,
} from "./upload.ts";
import {
  uploadVersionFile,
  type VersionFile,
  type VersionFileUploadOptions,
  type VersionFileUploadResult,
  versionFilePath,
  versionFileSha256,
} from "./version-files.ts";

export interface TestbayOptions {
  /** `{base_url}`, e.g. `http://127.0.0.1:8080/v1`. */
  baseUrl: string;
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  /** The server's audience; `testbay` by default. */
  audience?: string | undefined;
  /** A token obtained earlier in this pipeline run (TESTBAY_TOKEN): no token call is made. */
  token?: string | undefined;
  fetch?: FetchLike | undefined;
  clock?: Clock | undefined;
  random?: (() => number) | undefined;
  retry?: Partial<RetryOptions> | undefined;
  /** Client-side pacing; `false` turns it off (for tests of the server's limiter, not for pipelines). */
  pacing?: PacingPolicy | false | undefined;
  /** Refresh the token this long before it expires (5 minutes by default). */
  tokenRefreshMarginMs?: number | undefined;
  onResponse?: ((event: ResponseEvent) => void) | undefined;
  onRetry?: ((event: RetryEvent) => void) | undefined;
  userAgent?: string | undefined;
}

/** A downloaded file: the status (200, or 206 for a range), its SHA-256 from the ETag, the bytes written. */
export interface Download {
  status: number;
  sha256: string | undefined;
  bytes: number;
}

/** How long a read of executions may retry: see `executions.get`. */
export interface WaitReadOptions {
  deadlineAt?: number;
  untilDeadline?: boolean;
}

type ListFn<Q, T> = (query?: Q) => Promise<Page<T>>;

/** Every item of a list, page by page (each page one paced call). */
async function* everyItem<Q extends PageQuery, T>(list: ListFn<Q, T>, query: Q): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const page = await list({ ...query, ...(cursor ? { cursor } : {}) });
    yield* page.items;
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
}

/**
 * The Testbay API v1 as typed methods. One instance is one pipeline run's view of the service: it requests
 * one token and reuses it, paces its calls under the rate limit, retries only what is retryable, and turns
 * refusals into TestbayApiError with the server's code, detail and fix.
 */
export class Testbay {
  readonly transport: Transport;
  readonly tokens: TokenCache;
  readonly pacer: Pacer | undefined;
  private readonly audience: string;

  constructor(private readonly options: TestbayOptions) {
    const clock = options.clock ?? systemClock;
    const random: Random = options.random ?? Math.random;
    this.audience = options.audience ?? "testbay";
    const { clientId, clientSecret } = options;
    this.tokens = new TokenCache(clock, clientId && clientSecret ? () => this.requestToken() : undefined, {
      token: options.token,
      refreshMarginMs: options.tokenRefreshMarginMs ?? 5 * 60_000,
    });
    this.pacer =
      options.pacing === false ? undefined : new Pacer(clock, options.pacing || defaultPacingPolicy);
    this.transport = new Transport({
      baseUrl: options.baseUrl,
      fetch: options.fetch ?? ((input, init) => fetch(input, init)),
      // An injected fetch sees uploads too (tests script them); only the real network gets Expect.
      streamFetch: options.fetch ? undefined : expectContinueFetch,
      clock,
      pacer: this.pacer,
      retry: new RetryPolicy(options.retry ?? {}, clock, random, options.onRetry),
      tokens: this.tokens,
      userAgent: options.userAgent ?? `testbay-client/0.1.0 node/${process.versions.node}`,
      onResponse: options.onResponse,
    });
  }

  private agentCalls: AgentApi | undefined;

  /** The agent protocol (API.md §7), for `testbay-agent` and other device hosts. */
  get agent(): AgentApi {
    this.agentCalls ??= agentApi(this.transport);
    return this.agentCalls;
  }

  private async body<T>(call: CallOptions): Promise<T> {
    return (await this.transport.json<T>(call)).body;
  }

  /**
   * `POST /oauth/token`: a new token, every time it is called. Prefer `accessToken()`, which asks once per
   * run; this is what it uses.
   */
  async requestToken(): Promise<TokenResponse> {
    const { clientId, clientSecret } = this.options;
    if (!clientId || !clientSecret) {
      throw new Error("Requesting a token needs a client ID and a client secret.");
    }
    return this.body<TokenResponse>({
      method: "POST",
      path: "/oauth/token",
      anonymous: true,
      safeToResend: true,
      json: {
        grant_type: "client_credentials",
        client_id: clientId,
        client_secret: clientSecret,
        audience: this.audience,
      },
    });
  }

  /** The run's token: requested on first use, then reused until shortly before it expires. */
  accessToken(): Promise<string> {
    return this.tokens.get();
  }

  /** `GET /me`: the client, organization and role a token belongs to. */
  me(): Promise<WhoAmI> {
    return this.body({ method: "GET", path: "/me" });
  }

  private uploadLimit: Promise<number | undefined> | undefined;

  /**
   * The caller's upload limit in bytes (`GET /me` → `limits.max_upload_bytes`), asked once per instance;
   * undefined when the server does not say (an older server: its 413 tells instead).
   */
  maxUploadBytes(): Promise<number | undefined> {
    this.uploadLimit ??= this.me().then(
      (me) => {
        const limit = (me as { limits?: { max_upload_bytes?: unknown } }).limits?.max_upload_bytes;
        return typeof limit === "number" && limit > 0 ? limit : undefined;
      },
      () => undefined,
    );
    return this.uploadLimit;
  }

  readonly apps = {
    create: (app: CreateApp): Promise<App> => this.body({ method: "POST", path: "/apps", json: app }),
    get: (packageName: string): Promise<App> =>
      this.body({ method: "GET", path: `/apps/${segment(packageName)}` }),
    list: (query: PageQuery = {}): Promise<Page<App>> =>
      this.body({ method: "GET", path: "/apps", query: { ...query } }),
    all: (query: PageQuery = {}): AsyncGenerator<App> => everyItem(this.apps.list, query),
  };

  readonly versions = {
    get: (packageName: string, version: string): Promise<AppVersion> =>
      this.body({ method: "GET", path: `/apps/${segment(packageName)}/versions/${segment(version)}` }),
    /** `HEAD`: is the version registered? The cheap check before an upload. */
    exists: async (packageName: string, version: string): Promise<boolean> => {
      try {
        await this.transport.send({
          method: "HEAD",
          path: `/apps/${segment(packageName)}/versions/${segment(version)}`,
        });
        return true;
      } catch (error) {
        if (error instanceof TestbayApiError && error.status === 404) return false;
        throw error;
      }
    },
    list: (packageName: string, query: PageQuery = {}): Promise<Page<AppVersion>> =>
      this.body({ method: "GET", path: `/apps/${segment(packageName)}/versions`, query: { ...query } }),
    /** Streams a binary from disk; see UploadResult for what each outcome means. */
    upload: (options: UploadOptions): Promise<UploadResult> =>
      uploadVersion(this.transport, this.versions.get, {
        maxUploadBytes: () => this.maxUploadBytes(),
        ...options,
      }),
    /**
     * `GET …/binary`, written to `destination`. `range` asks for part of it (`{start, end}` inclusive).
     * Returns the status (200, or 206 for a range) and the binary's SHA-256 from the ETag.
     */
    downloadBinary: (
      packageName: string,
      version: string,
      destination: string,
      range?: { start: number; end?: number },
    ): Promise<Download> =>
      this.download(`/apps/${segment(packageName)}/versions/${segment(version)}/binary`, destination, range),
    /** `GET …/test-package`: the version's test package, or null when it has none (404 test_package_not_found). */
    testPackage: async (packageName: string, version: string): Promise<TestPackage | null> => {
      try {
        return await this.body<TestPackage>({
          method: "GET",
          path: `/apps/${segment(packageName)}/versions/${segment(version)}/test-package`,
        });
      } catch (error) {
        // Only this code means "no test package": an unknown app or version is an error of its own.
        if (error instanceof TestbayApiError && error.code === "test_package_not_found") return null;
        throw error;
      }
    },
    /**
     * `PUT …/test-package`, streamed from disk, after the version is registered. Skips the transfer when the
     * version has this very file already; throws a TestbayApiError (409 test_package_exists, reason
     * different_test_package) when it has another.
     */
    uploadTestPackage: (
      packageName: string,
      version: string,
      file: string,
      options: Omit<TestPackageUploadOptions, "packageName" | "version" | "file"> = {},
    ): Promise<TestPackageUploadResult> =>
      uploadTestPackage(this.transport, this.versions.testPackage, {
        maxUploadBytes: () => this.maxUploadBytes(),
        ...options,
        packageName,
        version,
        file,
      }),
    /** `GET …/test-package/binary`, written to `destination`; like downloadBinary. */
    downloadTestPackage: (
      packageName: string,
      version: string,
      destination: string,
      range?: { start: number; end?: number },
    ): Promise<Download> =>
      this.download(
        `/apps/${segment(packageName)}/versions/${segment(version)}/test-package/binary`,
        destination,
        range,
      ),
  };

  /** A version's files (API.md §14): uploaded HEAD-first, listed, checked and downloaded by name. */
  readonly versionFiles = {
    /** `PUT …/files/{name}` after a HEAD: see VersionFileUploadResult for what each outcome means. */
    upload: (options: VersionFileUploadOptions): Promise<VersionFileUploadResult> =>
      uploadVersionFile(this.transport, { maxUploadBytes: () => this.maxUploadBytes(), ...options }),
    /** `GET …/files`: every file of the version. */
    list: async (packageName: string, version: string): Promise<VersionFile[]> =>
      (
        await this.body<{ items: VersionFile[] }>({
          method: "GET",
          path: versionFilePath(packageName, version),
        })
      ).items,
    /** `HEAD …/files/{name}`: the stored file's sha256, or undefined when the version has no file by that name. */
    sha256: (packageName: string, version: string, name: string): Promise<string | undefined> =>
      versionFileSha256(this.transport, packageName, version, name),
    /** `GET …/files/{name}`, written to `destination`; like downloadBinary. */
    download: (packageName: string, version: string, name: string, destination: string): Promise<Download> =>
      this.download(versionFilePath(packageName, version, name), destination, undefined),
  };

  /** A stored file streamed to `destination`, with its SHA-256 from the ETag. */
  private async download(
    path: string,
    destination: string,
    range: { start: number; end?: number } | undefined,
  ): Promise<Download> {
    const response = await this.transport.send({
      method: "GET",
      path,
      headers: {
        accept: "application/octet-stream",
        ...(range ? { range: `bytes=${range.start}-${range.end ?? ""}` } : {}),
      },
    });
    let bytes = 0;
    const source = response.body
      ? Readable.fromWeb(response.body as WebReadableStream<Uint8Array>)
      : Readable.from([]);
    source.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
    });
    await pipeline(source, createWriteStream(destination));
    const etag = response.headers.get("etag")?.replaceAll('"', "");
    return { status: response.status, sha256: etag, bytes };
  }

  readonly testPlans = {
    create: (plan: CreateTestPlan): Promise<TestPlan> =>
      this.body({ method: "POST", path: "/testplans", json: plan }),
    get: (id: string): Promise<TestPlan> => this.body({ method: "GET", path: `/testplans/${segment(id)}` }),
    list: (query: TestPlanQuery = {}): Promise<Page<TestPlan>> =>
      this.body({ method: "GET", path: "/testplans", query: { ...query } }),
    all: (query: TestPlanQuery = {}): AsyncGenerator<TestPlan> => everyItem(this.testPlans.list, query),
    patch: (id: string, changes: PatchTestPlan): Promise<TestPlan> =>
      this.body({ method: "PATCH", path: `/testplans/${segment(id)}`, json: changes }),
    archive: (id: string): Promise<TestPlan> =>
      this.body({ method: "POST", path: `/testplans/${segment(id)}/archive`, safeToResend: true }),
    restore: (id: string): Promise<TestPlan> =>
      this.body({ method: "POST", path: `/testplans/${segment(id)}/restore`, safeToResend: true }),
    /** Soft delete: the plan is restorable for 30 days. */
    delete: (id: string): Promise<TestPlan> =>
      this.body({ method: "DELETE", path: `/testplans/${segment(id)}` }),
  };

  readonly triggers = {
    /**
     * `POST /testplan/run`: one plan. Carries an Idempotency-Key (a new UUID unless given) on every
     * attempt, so a retry after a 502 or a dropped connection never starts the plan twice.
     */
    run: async (
      request: TriggerRequest,
      options: { idempotencyKey?: string } = {},
    ): Promise<TriggerResult> => {
      const idempotencyKey = options.idempotencyKey ?? randomUUID();
      const response = await this.transport.json<{ execution: Execution }>({
        method: "POST",
        path: "/testplan/run",
        json: request,
        idempotencyKey,
      });
      return {
        execution: response.body.execution,
        idempotency_key: idempotencyKey,
        replayed: response.headers.get("idempotent-replayed") === "true",
      };
    },
    /**
     * `POST /testplan/run/batch`: several plans in one call, with an Idempotency-Key kept across retries.
     * Resolves on 200 and 207: read `failed_executions` either way (rule 6). When no plan started, throws a
     * TestbayApiError whose `failedExecutions` lists each plan with its code, reason and fix.
     */
    runBatch: async (
      request: BatchTriggerRequest,
      options: { idempotencyKey?: string; deadlineAt?: number } = {},
    ): Promise<BatchTriggerResult> => {
      const idempotencyKey = options.idempotencyKey ?? randomUUID();
      const response = await this.transport.json<{
        executions: Execution[];
        failed_executions?: BatchTriggerResult["failed_executions"];
      }>({
        method: "POST",
        path: "/testplan/run/batch",
        json: request,
        idempotencyKey,
        deadlineAt: options.deadlineAt,
      });
      return {
        status: response.status === 207 ? 207 : 200,
        executions: response.body.executions ?? [],
        failed_executions: response.body.failed_executions ?? [],
        idempotency_key: idempotencyKey,
        replayed: response.headers.get("idempotent-replayed") === "true",
      };
    },
  };

  readonly agents = {
    /** `GET /agents`: who is connected, with which devices and what they run. */
    list: async (): Promise<Agent[]> =>
      (await this.body<{ items: Agent[] }>({ method: "GET", path: "/agents" })).items,
  };

  readonly tests = {
    /**
     * `PUT /tests/{test_id}/quarantine`: the test keeps running and being reported, but its failures stop
     * failing executions. Calling it again changes the reason.
     */
    quarantine: (testId: string, reason: string): Promise<Quarantine> =>
      this.body({
        method: "PUT",
        path: `/tests/${segment(testId)}/quarantine`,
        json: { reason },
        safeToResend: true,
      }),
    /** `DELETE /tests/{test_id}/quarantine`: its failures fail executions again; done also when it was not quarantined. */
    release: async (testId: string): Promise<void> => {
      await this.transport.send({ method: "DELETE", path: `/tests/${segment(testId)}/quarantine` });
    },
  };

  /** Webhook endpoints of the organization (API.md §9): where run results are sent, and what was sent. */
  readonly webhooks = {
    /** `POST /webhooks`: 201 with the signing secret, shown this once (none for slack). */
    create: (webhook: CreateWebhook): Promise<CreatedWebhook> =>
      this.body({ method: "POST", path: "/webhooks", json: webhook }),
    list: (query: PageQuery = {}): Promise<Page<Webhook>> =>
      this.body({ method: "GET", path: "/webhooks", query: { ...query } }),
    all: (query: PageQuery = {}): AsyncGenerator<Webhook> => everyItem(this.webhooks.list, query),
    get: (id: string): Promise<Webhook> => this.body({ method: "GET", path: `/webhooks/${segment(id)}` }),
    /** `PATCH`: changes what is given; `enabled: true` also clears the reason the server disabled it. */
    update: (id: string, changes: UpdateWebhook): Promise<Webhook> =>
      // The same changes applied twice leave the same webhook: safe to send again after a dropped connection.
      this.body({ method: "PATCH", path: `/webhooks/${segment(id)}`, json: changes, safeToResend: true }),
    /** `DELETE`: its delivery log goes with it. */
    delete: async (id: string): Promise<void> => {
      await this.transport.send({ method: "DELETE", path: `/webhooks/${segment(id)}` });
    },
    /**
     * A new signing secret, shown this once. Resent after a dropped connection it rotates again, and the
     * answer then holds the secret that is in force: the one the caller must keep.
     */
    rotateSecret: (id: string): Promise<RotatedWebhookSecret> =>
      this.body({ method: "POST", path: `/webhooks/${segment(id)}/rotate-secret`, safeToResend: true }),
    /** Queues a `webhook.test` message whatever the webhook's events; follow it in `deliveries`. */
    test: (id: string): Promise<WebhookDeliveryAccepted> =>
      this.body({ method: "POST", path: `/webhooks/${segment(id)}/test` }),
    /** The delivery log: one item per message, newest first, each with its attempts oldest first. */
    deliveries: (id: string, query: PageQuery = {}): Promise<Page<WebhookDelivery>> =>
      this.body({ method: "GET", path: `/webhooks/${segment(id)}/deliveries`, query: { ...query } }),
    /** Sends a message again under the same webhook-id, from the start of the retry schedule. */
    redeliver: (id: string, deliveryId: string): Promise<WebhookDeliveryAccepted> =>
      this.body({
        method: "POST",
        path: `/webhooks/${segment(id)}/deliveries/${segment(deliveryId)}/redeliver`,
      }),
  };

  readonly executions = {
    /**
     * `deadlineAt` (ms since the epoch) stops retries past it, e.g. a --timeout; with `untilDeadline` a server
     * that does not answer is retried until then, however many attempts it takes (a wait, CLIENT.md rule 13).
     */
    get: (id: string, options: WaitReadOptions = {}): Promise<Execution> =>
      this.body({ method: "GET", path: `/executions/${segment(id)}`, ...options }),
    list: (query: ExecutionQuery = {}, options: WaitReadOptions = {}): Promise<Page<Execution>> =>
      this.body({ method: "GET", path: "/executions", query: { ...query }, ...options }),
    all: (query: ExecutionQuery = {}): AsyncGenerator<Execution> =>
      everyItem((q) => this.executions.list(q), query),
    /** `GET /executions/{id}/junit`: the test cases the agents reported, as one JUnit XML document. */
    junit: async (id: string): Promise<string> => {
      const response = await this.transport.send({
        method: "GET",
        path: `/executions/${segment(id)}/junit`,
        headers: { accept: "application/xml" },
      });
      return response.text();
    },
    /** `GET /executions/{id}/tests`, one page; `?status=failed` for what failed. */
    tests: (id: string, query: TestCaseQuery = {}): Promise<Page<TestCase>> =>
      this.body({ method: "GET", path: `/executions/${segment(id)}/tests`, query: { ...query } }),
    /** `GET /executions/{id}/log`: the log lines the agents sent, as text. */
    log: async (id: string): Promise<string> => {
      const response = await this.transport.send({
        method: "GET",
        path: `/executions/${segment(id)}/log`,
        headers: { accept: "text/plain" },
      });
      return response.text();
    },
    /** `GET /executions/{id}/artifacts`: screenshots, logcat cuts, reports, each with its download URL. */
    artifacts: async (id: string): Promise<Artifact[]> =>
      (
        await this.body<{ items: Artifact[] }>({
          method: "GET",
          path: `/executions/${segment(id)}/artifacts`,
        })
      ).items,
    /** Queued: cancelled at once; running: its agent is told to stop; finished: returned as it ended. */
    cancel: (id: string): Promise<Execution> =>
      this.body({ method: "POST", path: `/executions/${segment(id)}/cancel`, safeToResend: true }),
  };
}
