// Webhook delivery as a receiver feels it (issue 17): executions finish at a steady rate (each triggered with
// POST /v1/testplan/run, claimed and completed by an agent loop in this process), every one of them makes an
// execution.finished event, and a receiver on 127.0.0.1 verifies each delivery's signature with the
// standardwebhooks library, as receivers do, and answers 200. Latency: from the execution's finished_at (the
// event's time, on this machine's clock) to the receiver having read and verified the body. Lost: finished
// executions whose event never arrived. On the embedded default (one instance, SQLite) and on the scaled set
// (two instances on PostgreSQL and Redis, requests spread over both, each instance fanning out and sending).
// Baseline of the same run: a POST from this process straight to the same receiver.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Webhook } from "standardwebhooks";
import { benchResult } from "./lib/bench-result.ts";
import { CleanupScope } from "./lib/cleanup.ts";
import { formatNumber } from "./lib/format.ts";
import { sdkFor } from "./lib/opening.ts";
import { repoRoot } from "./lib/paths.ts";
import { createBenchDatabase } from "./lib/postgres.ts";
import { makeTempDir } from "./lib/temp-dir.ts";
import { startTestbayInstances } from "./lib/testbay-instances.ts";
import { type BenchResult, type Row, type RunOptions, ratio } from "./lib/types.ts";

export const name = "webhooks";
export const description =
  "webhook delivery latency (execution finished → receiver's verified 200) and losses at a steady rate of finished executions, embedded (SQLite) and scaled (2 instances, PostgreSQL + Redis)";

/** Issue 17: p99 from the event to the receiver's 200. */
const p99TargetMs = 2000;
const unlimited = "1000000000";

const plans = {
  full: { perSecond: 50, seconds: 60, drainSeconds: 60, baselinePosts: 500 },
  quick: { perSecond: 20, seconds: 10, drainSeconds: 30, baselinePosts: 100 },
};
type Plan = typeof plans.full;

type Setup = "embedded" | "scaled";

interface Delivery {
  webhookId: string;
  executionId: string;
  latencyMs: number;
}

interface SetupResult {
  setup: Setup;
  finished: number;
  deliveries: Delivery[];
  /** Signatures the receiver could not verify (must be 0). */
  badSignatures: number;
  lost: number;
  /** Messages received more than once (at least once allows it; counted, not an error). */
  repeated: number;
  baseline: number[];
  /** Cycles (trigger, claim, complete) that failed. */
  failedCycles: number;
  /** The load's wall time ÷ its planned time: how well this process kept the rate. */
  paceRatio: number;
}

const percentile = (sorted: readonly number[], share: number) =>
  sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)] as number);

function bodyOf(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => {
      text += chunk;
    });
    request.on("end", () => resolve(text));
    request.on("error", reject);
  });
}

/** The receiver: verifies each delivery with standardwebhooks and keeps when it arrived. */
class Receiver {
  secret = "";
  readonly deliveries: Delivery[] = [];
  readonly seen = new Map<string, number>();
  badSignatures = 0;
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer(async (request, response) => {
      const body = await bodyOf(request);
      const receivedAt = Date.now();
      if (request.headers["x-bench"] === "baseline") {
        response.writeHead(200).end();
        return;
      }
      try {
        const message = new Webhook(this.secret).verify(body, {
          "webhook-id": String(request.headers["webhook-id"]),
          "webhook-timestamp": String(request.headers["webhook-timestamp"]),
          "webhook-signature": String(request.headers["webhook-signature"]),
        }) as { type: string; data: { id: string; finished_at: string | null } };
        const webhookId = String(request.headers["webhook-id"]);
        const times = (this.seen.get(webhookId) ?? 0) + 1;
        this.seen.set(webhookId, times);
        if (message.type === "execution.finished" && times === 1 && message.data.finished_at) {
          this.deliveries.push({
            webhookId,
            executionId: message.data.id,
            latencyMs: receivedAt - Date.parse(message.data.finished_at),
          });
        }
        response.writeHead(200).end();
      } catch {
        this.badSignatures++;
        response.writeHead(400).end();
      }
    });
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server?.closeAllConnections();
      this.server?.close(() => resolve());
    });
  }
}

async function api(origin: string, token: string, method: string, route: string, body?: unknown) {
  const response = await fetch(`${origin}/v1${route}`, {
    method,
    headers: { "x-api-key": token, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function startSet(setup: Setup, dir: string, scope: CleanupScope, log: (line: string) => void) {
  const env: Record<string, string> = {
    TESTBAY_DATA_DIR: path.join(dir, "data"),
    TESTBAY_LOG_LEVEL: "warn",
    TESTBAY_LOCAL_AGENT: "false",
    TESTBAY_WEBHOOK_ALLOW_PRIVATE: "true",
    TESTBAY_RATE_LIMIT_BURST: unlimited,
    TESTBAY_RATE_LIMIT_PER_SECOND: unlimited,
    TESTBAY_AGENT_RATE_LIMIT_BURST: unlimited,
    TESTBAY_AGENT_RATE_LIMIT_PER_SECOND: unlimited,
  };
  let instances = 1;
  if (setup === "scaled") {
    const database = await createBenchDatabase("webhooks", scope);
    if ("reason" in database) throw new Error(database.reason);
    env.TESTBAY_DATABASE_URL = database.url;
    env.TESTBAY_REDIS_URL = process.env.TESTBAY_BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
    instances = 2;
  }
  const servers = await startTestbayInstances({
    bench: "webhooks",
    setup,
    count: instances,
    env,
    dir,
    scope,
    log,
  });
  return servers;
}

async function measure(setup: Setup, plan: Plan, log: (line: string) => void): Promise<SetupResult> {
  const scope = new CleanupScope();
  const receiver = new Receiver();
  try {
    const dir = await makeTempDir(`webhooks-${setup}`);
    scope.defer(() => import("node:fs/promises").then(({ rm }) => rm(dir, { recursive: true, force: true })));
    const url = await receiver.start();
    scope.defer(() => receiver.close());
    const servers = await startSet(setup, dir, scope, log);
    const first = servers[0]?.ready;
    if (!first?.clients) throw new Error("the seeding instance sent no clients");
    const origins = servers.map((s) => `http://127.0.0.1:${s.ready.port}`);
    const origin = origins[0] as string;
    // The SDK sets up (app, version, plan, webhook); the load below sends its own requests, to either instance.
    const sdk = sdkFor(origin, first, first.clients.ci);
    const ci = await sdk.accessToken();
    const agent = await sdkFor(origin, first, first.clients.agent).accessToken();

    const pkg = "com.example.basic";
    const expectStatus = (what: string, got: { status: number; body: unknown }, want: number) => {
      if (got.status !== want)
        throw new Error(`${what}: ${got.status} ${JSON.stringify(got.body).slice(0, 300)}`);
    };
    await sdk.apps.create({ package_name: pkg, platform: "android" });
    await sdk.versions.upload({
      packageName: pkg,
      version: "1.0.0",
      file: path.join(repoRoot, "packages/server/test/fixtures/binaries/app-basic.apk"),
    });
    const created = await sdk.testPlans.create({
      name: "webhooks bench",
      package_name: pkg,
      steps: [{ type: "inspect", expect: { debuggable: false } }],
    });
    const hook = await sdk.webhooks.create({ url, events: ["execution.finished"] });
    receiver.secret = String(hook.secret);

    // Baseline: this process POSTing straight to the receiver, one at a time.
    const baseline: number[] = [];
    for (let i = 0; i < plan.baselinePosts; i++) {
      const started = performance.now();
      const response = await fetch(url, { method: "POST", headers: { "x-bench": "baseline" }, body: "{}" });
      await response.arrayBuffer();
      baseline.push(performance.now() - started);
    }

    // The load: one cycle (trigger, claim, complete) started every 1/perSecond s, spread over the instances.
    const total = plan.perSecond * plan.seconds;
    const finishedIds = new Set<string>();
    let failedCycles = 0;
    const cycle = async (i: number) => {
      const at = origins[i % origins.length] as string;
      try {
        const run = await api(at, ci, "POST", "/testplan/run", {
          test_plan_id: created.id,
          package_name: pkg,
          version: "1.0.0",
        });
        expectStatus("trigger", run, 200);
        const claim = await api(at, agent, "POST", "/agent/claim", {
          agent_id: `bench-${i % 8}`,
          devices: [],
          host: true,
          step_types: ["inspect"],
          wait_seconds: 0,
        });
        if (claim.status === 204) return;
        expectStatus("claim", claim, 200);
        const job = claim.body.job as { lease_id: string; execution_id: string };
        const done = await api(at, agent, "POST", `/agent/jobs/${job.lease_id}/complete`, {
          status: "passed",
        });
        expectStatus("complete", done, 200);
      } catch (error) {
        failedCycles++;
        if (failedCycles <= 3) log(`webhooks: a cycle failed: ${(error as Error).message}`);
      }
    };
    log(`webhooks: ${setup}: ${formatNumber(total)} executions at ${plan.perSecond}/s`);
    const loadStarted = performance.now();
    const cycles: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = loadStarted + (i * 1000) / plan.perSecond;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      cycles.push(cycle(i));
    }
    await Promise.all(cycles);
    const paceRatio = (performance.now() - loadStarted) / (plan.seconds * 1000);
    // A claim takes any queued run, not the one its cycle triggered: the finished set is read back.
    for (let page: string | null = null, first = true; first || page; first = false) {
      const listed = await api(
        origin,
        ci,
        "GET",
        `/executions?status=passed&limit=100${page ? `&cursor=${encodeURIComponent(page)}` : ""}`,
      );
      for (const item of listed.body.items as Array<{ id: string }>) finishedIds.add(item.id);
      page = (listed.body.next_cursor as string | null) ?? null;
    }

    const drainUntil = performance.now() + plan.drainSeconds * 1000;
    while (performance.now() < drainUntil) {
      const arrived = new Set(receiver.deliveries.map((d) => d.executionId));
      if ([...finishedIds].every((id) => arrived.has(id))) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const arrived = new Set(receiver.deliveries.map((d) => d.executionId));
    return {
      setup,
      finished: finishedIds.size,
      deliveries: [...receiver.deliveries],
      badSignatures: receiver.badSignatures,
      lost: [...finishedIds].filter((id) => !arrived.has(id)).length,
      repeated: [...receiver.seen.values()].filter((n) => n > 1).length,
      baseline,
      failedCycles,
      paceRatio,
    };
  } finally {
    await scope.close();
  }
}

export async function run({ quick, log }: RunOptions): Promise<BenchResult> {
  const plan = quick ? plans.quick : plans.full;
  const startedAt = new Date();
  const results: SetupResult[] = [];
  for (const setup of ["embedded", "scaled"] as const) results.push(await measure(setup, plan, log));

  const rows: Row[] = results.map((r) => {
    const latencies = r.deliveries.map((d) => d.latencyMs).sort((a, b) => a - b);
    const base = [...r.baseline].sort((a, b) => a - b);
    return {
      label: r.setup,
      metrics: [
        { label: "finished", value: r.finished, unit: "" },
        { label: "delivered", value: r.deliveries.length, unit: "" },
        { label: "lost", value: r.lost, unit: "" },
        { label: "p50", value: percentile(latencies, 0.5), unit: "ms" },
        { label: "p99", value: percentile(latencies, 0.99), unit: "ms" },
        { label: "max", value: latencies.at(-1) ?? Number.NaN, unit: "ms" },
        { label: "direct POST p99", value: percentile(base, 0.99), unit: "ms", decimals: 2 },
      ],
      detail: `repeated ${r.repeated}, bad signatures ${r.badSignatures}, failed cycles ${r.failedCycles}, pace ${r.paceRatio.toFixed(2)}× planned time`,
    };
  });
  const ratios = results.flatMap((r) => {
    const latencies = r.deliveries.map((d) => d.latencyMs).sort((a, b) => a - b);
    const base = [...r.baseline].sort((a, b) => a - b);
    const p99 = percentile(latencies, 0.99);
    return [
      ratio(`${r.setup}: delivery p99, ms (a time, issue 17's target ≤ ${p99TargetMs})`, p99, {
        op: "<=",
        value: p99TargetMs,
      }),
      ratio(
        `${r.setup}: delivery p99 ÷ a direct POST's p99 to the same receiver`,
        p99 / percentile(base, 0.99),
      ),
      ratio(`${r.setup}: lost (a count, must be 0)`, r.lost, { op: "<=", value: 0 }),
      ratio(`${r.setup}: bad signatures (a count, must be 0)`, r.badSignatures, { op: "<=", value: 0 }),
    ];
  });
  return benchResult(quick, startedAt, {
    name,
    description,
    environment: { perSecond: plan.perSecond, seconds: plan.seconds },
    rows,
    detailLabel: "also",
    ratios,
    notes: [
      `load: ${plan.perSecond} cycles a second for ${plan.seconds} s, each POST /v1/testplan/run (a plan of one inspect step, devices: []), POST /v1/agent/claim (wait_seconds 0) and POST …/complete {status: passed}, started on schedule whatever the earlier ones are doing; scaled: cycles alternate between the two instances`,
      "latency: the receiver's clock when it has read and verified the body (standardwebhooks Webhook.verify) minus the execution's finished_at in the delivered body (the server's clock: the same machine); first delivery of each message only",
      `lost: executions listed passed after the load (GET /v1/executions) whose execution.finished never arrived within ${plan.drainSeconds} s after the load`,
      "embedded: one instance on SQLite; scaled: two instances on one PostgreSQL database and Redis, sharing one data dir for blobs (webhooks store none), each fanning out when one of its executions changes (at most a round per 100 ms) and sending when deliveries are inserted, with 2 s and 1 s backstop polls",
      "servers not pinned to a CPU; this process (the load and the receiver) shares the machine with them",
    ],
    details: results.map((r) => ({ ...r, deliveries: r.deliveries.length })),
  });
}
