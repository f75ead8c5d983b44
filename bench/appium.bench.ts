// What Testbay's WebDriver relay adds to an Appium command (API.md §12 "Limits and speed"; issue 27): the same
// fake-driver session called two ways, straight at the Appium the agent started for it (the baseline) and through
// `/wd/hub` (client → server → the agent's channel → Appium), one command at a time, interleaved so drift falls on
// both alike. Embedded (one instance, SQLite) and scaled (two instances on PostgreSQL and Redis, the commands sent
// to the instance that does not hold the agent's channel, so each is forwarded once). Then many sessions at once on
// the embedded server, counting errors. A real `testbay-agent --appium` process with the repository's Appium and
// @appium/fake-driver (as packages/agent/test/appium/agent-appium.int.test.ts starts them) on stand-in adb devices.
import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import { startAgentProcess, stopAgentProcesses } from "../packages/agent/test/agent-process.ts";
import {
  FAKE_APP,
  fakeDriverAgentArgs,
  installFakeDriver,
} from "../packages/agent/test/appium/fake-driver-home.ts";
import { createDeviceLab, type DeviceLab } from "../packages/agent/test/stand-ins/device-lab.ts";
import { appiumProcessesUnder, sessionsInAppiumLog } from "./lib/appium-direct.ts";
import { benchResult } from "./lib/bench-result.ts";
import { CleanupScope } from "./lib/cleanup.ts";
import { unlimited } from "./lib/opening.ts";
import { repoRoot } from "./lib/paths.ts";
import { createBenchDatabase } from "./lib/postgres.ts";
import { type ReadyMessage, startServerProcess } from "./lib/server-process.ts";
import { median, percentile } from "./lib/stats.ts";
import { makeTempDir } from "./lib/temp-dir.ts";
import { startTestbayInstances, type TestbayInstance } from "./lib/testbay-instances.ts";
import type { RunOptions } from "./lib/types.ts";
import { type BenchResult, type Ratio, type Row, ratio, type Section, type Target } from "./lib/types.ts";
import type { BareRelayFrontReady } from "./servers/bare-relay-front.ts";

export const name = "appium";
export const description =
  "a relayed WebDriver command's added latency over calling the agent's Appium directly (fake driver, getPageSource), embedded and forwarded between two instances; and concurrent sessions without error";

/** API.md §12: added median, relayed − direct. */
const embeddedTarget: Target = { op: "<=", value: 1 };
const forwardedTarget: Target = { op: "<=", value: 2 };

const plans = {
  // 300 warm-up rounds: with 100, the first fifth of the measured rounds still ran slower than the rest on every
  // path (its "by round" column), which is the processes' code warming up, not the relay.
  full: { commands: 1000, warmup: 300, sessions: 20, commandsPerSession: 100, timeLimitMs: 300_000 },
  quick: { commands: 100, warmup: 20, sessions: 5, commandsPerSession: 20, timeLimitMs: 60_000 },
};
type Plan = (typeof plans)["full"];

type Instance = TestbayInstance;
type Setup = "embedded" | "scaled";

/** The fake driver on a stand-in Android device (its platformName is "Fake": testbay:options.platform picks it). */
const capabilities = (name: string) => ({
  capabilities: {
    alwaysMatch: {
      platformName: "Fake",
      "appium:automationName": "Fake",
      "appium:app": FAKE_APP,
      "testbay:options": {
        platform: "android",
        name,
        queue_timeout_seconds: 600,
        // The relay is measured, not the stand-in's screen recording: one fewer process per session.
        record_video: false,
      },
    },
    firstMatch: [{}],
  },
});

interface Timed {
  ms: number;
  status: number;
  bytes: number;
}

/** One command, timed from the request to the last byte of the answer (Node's fetch: undici, keep-alive). */
async function timedGet(url: string): Promise<Timed> {
  const started = performance.now();
  const response = await fetch(url);
  const text = await response.text();
  return { ms: performance.now() - started, status: response.status, bytes: text.length };
}

/** A W3C answer: `{value: …}`; only the new session's `value.sessionId` is read. */
interface W3cAnswer {
  value?: { sessionId?: string };
}

async function json(url: string, init: RequestInit): Promise<{ status: number; body: W3cAnswer }> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as W3cAnswer) : {} };
}

interface TestbaySet {
  instances: Instance[];
  origins: string[];
  ci: { client_id: string; client_secret: string };
  agentCredentials: { client_id: string; client_secret: string };
  audience: string;
}

async function startSet(setup: Setup, dir: string, scope: CleanupScope, log: (line: string) => void) {
  const env: Record<string, string> = {
    TESTBAY_DATA_DIR: path.join(dir, `${setup}-data`),
    TESTBAY_HOST: "127.0.0.1",
    TESTBAY_LOG_LEVEL: "warn",
    TESTBAY_LOCAL_AGENT: "false",
    TESTBAY_RATE_LIMIT_BURST: unlimited,
    TESTBAY_RATE_LIMIT_PER_SECOND: unlimited,
    TESTBAY_AGENT_RATE_LIMIT_BURST: unlimited,
    TESTBAY_AGENT_RATE_LIMIT_PER_SECOND: unlimited,
  };
  let count = 1;
  if (setup === "scaled") {
    const database = await createBenchDatabase("appium", scope);
    if ("reason" in database) throw new Error(database.reason);
    env.TESTBAY_DATABASE_URL = database.url;
    env.TESTBAY_REDIS_URL = process.env.TESTBAY_BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
    count = 2;
  }
  const instances = await startTestbayInstances({ bench: "appium", setup, count, env, dir, scope, log });
  const first = instances[0]?.ready;
  if (!first?.clients) throw new Error("the seeding instance sent no clients");
  return {
    instances,
    origins: instances.map((s) => `http://127.0.0.1:${s.ready.port}`),
    ci: first.clients.ci,
    agentCredentials: first.clients.agent,
    audience: first.audience,
  } satisfies TestbaySet;
}

function startAgent(set: TestbaySet, lab: DeviceLab, appiumHome: string, scratch: string, agentName: string) {
  const running: ChildProcess[] = [];
  // The agent's channel goes to the first instance (its TESTBAY_URL): in the scaled set the second one forwards.
  const agent = startAgentProcess({
    name: agentName,
    baseUrl: `${set.origins[0]}/v1`,
    audience: set.audience,
    credentials: set.agentCredentials,
    scratch,
    // Away from the integration suites' ranges (packages/agent/test/appium): 25 blocks of 4.
    args: fakeDriverAgentArgs("26300-26399"),
    env: { ...lab.env, APPIUM_HOME: appiumHome },
    running,
  });
  // SIGTERM first, so the agent stops its Appium servers and device followers before the lab goes (SIGKILL after).
  const stop = async () => {
    if (agent.child.exitCode === null && agent.child.signalCode === null) {
      agent.child.kill("SIGTERM");
      await Promise.race([agent.exited, delay(15_000)]);
    }
    await stopAgentProcesses(running);
  };
  return { agent, workDir: path.join(scratch, agentName), stop };
}

async function newSession(origin: string, set: TestbaySet, label: string, agentOutput: () => string) {
  const basic = Buffer.from(`${set.ci.client_id}:${set.ci.client_secret}`).toString("base64");
  const created = await json(`${origin}/wd/hub/session`, {
    method: "POST",
    headers: { authorization: `Basic ${basic}`, "content-type": "application/json" },
    body: JSON.stringify(capabilities(label)),
  });
  const id = created.body.value?.sessionId;
  if (created.status !== 200 || !id) {
    throw new Error(
      `new session (${label}): ${created.status} ${JSON.stringify(created.body).slice(0, 400)}\nagent said:\n${agentOutput().slice(-2000)}`,
    );
  }
  return id;
}

async function deleteSession(origin: string, id: string) {
  await json(`${origin}/wd/hub/session/${id}`, { method: "DELETE" });
}

/** The agent's Appium for the one session running: its port, and the Appium session ID its log names. */
async function directSession(workDir: string, deadline: number) {
  for (;;) {
    const [only, ...more] = appiumProcessesUnder(workDir);
    if (only && more.length === 0) {
      const ids = sessionsInAppiumLog(only.logFile);
      if (ids.length === 1)
        return { base: `http://127.0.0.1:${only.port}`, appiumSessionId: ids[0] as string };
      if (ids.length > 1) throw new Error(`${only.logFile} names ${ids.length} sessions: ${ids.join(", ")}`);
    }
    if (more.length > 0) throw new Error(`expected one Appium under ${workDir}, found ${more.length + 1}`);
    if (Date.now() > deadline) throw new Error(`no Appium with a session found under ${workDir}`);
    await delay(100);
  }
}

/**
 * What a path measures: the baseline or a relayed command (`measured`), or a floor shown for comparison, with no
 * target: the server's own part without a relay (`unknown-session`: an unknown session's `404 invalid session id`
 * after its lookup), or the relay's hops without Testbay (`bare-hops`: bench/servers/bare-relay-front.ts, the same
 * page source).
 */
type PathKind = "measured" | "unknown-session" | "bare-hops";

interface Path {
  label: string;
  url: string;
  kind: PathKind;
}

interface Series {
  label: string;
  ms: number[];
  kind: PathKind;
}

function stats(values: readonly number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: median(sorted), p90: percentile(sorted, 90), p99: percentile(sorted, 99) };
}

/**
 * Each round sends one command to every URL, in an order rotated round by round, so no path always goes first
 * (right after an idle gap) or last. Every answer must be 200 with the same page source.
 */
async function interleave(urls: readonly Path[], count: number, timeLimitMs: number) {
  const series: Series[] = urls.map((u) => ({ label: u.label, ms: [], kind: u.kind }));
  const until = Date.now() + timeLimitMs;
  let bytes: number | undefined;
  for (let round = 0; round < count && Date.now() < until; round++) {
    for (let k = 0; k < urls.length; k++) {
      const index = (round + k) % urls.length;
      const target = urls[index] as Path;
      const answer = await timedGet(target.url);
      const expected = target.kind === "unknown-session" ? 404 : 200;
      if (answer.status !== expected)
        throw new Error(`${target.label}: ${answer.status} at command ${round + 1}, not ${expected}`);
      if (target.kind === "unknown-session") {
        (series[index] as Series).ms.push(answer.ms);
        continue;
      }
      bytes ??= answer.bytes;
      if (answer.bytes !== bytes)
        throw new Error(`${target.label}: a page source of ${answer.bytes} bytes, not ${bytes}`);
      (series[index] as Series).ms.push(answer.ms);
    }
  }
  return { series, bytes: bytes ?? 0 };
}

interface LatencyResult {
  setup: Setup;
  series: Series[];
  bytes: number;
}

async function measureLatency(
  setup: Setup,
  plan: Plan,
  shared: { dir: string; appiumHome: string },
  log: (line: string) => void,
): Promise<{ latency: LatencyResult; concurrency?: ConcurrencyResult }> {
  const scope = new CleanupScope();
  try {
    const dir = path.join(shared.dir, setup);
    await mkdir(dir, { recursive: true });
    const set = await startSet(setup, dir, scope, log);
    // One device for the measured session in both setups, so both measure the same agent: one that also
    // watches 20 devices (the concurrent sessions' lab) spends CPU on it that the relay's added time would show.
    const latencyRun = new CleanupScope();
    const lab = await labOf(1);
    latencyRun.defer(() => lab.cleanup());
    const agent = startAgent(set, lab, shared.appiumHome, path.join(dir, "agents"), `bench-${setup}`);
    latencyRun.defer(agent.stop);

    log(`appium: ${setup}: opening the measured session (the agent starts Appium for it)`);
    const holder = set.origins[0] as string;
    const other = set.origins[1];
    const id = await newSession(other ?? holder, set, `bench ${setup}`, agent.agent.output);
    const direct = await directSession(agent.workDir, Date.now() + 60_000);
    const bare = await startBareRelay(direct, dir, latencyRun);
    const urls: Path[] = [
      {
        label: "direct (the agent's Appium)",
        url: `${direct.base}/session/${direct.appiumSessionId}/source`,
        kind: "measured",
      },
      {
        label: setup === "embedded" ? "relayed (/wd/hub)" : "relayed, instance holding the channel",
        url: `${holder}/wd/hub/session/${id}/source`,
        kind: "measured",
      },
      ...(other
        ? [
            {
              label: "relayed, forwarded (other instance)",
              url: `${other}/wd/hub/session/${id}/source`,
              kind: "measured" as const,
            },
          ]
        : []),
      {
        label: "floor: unknown session → 404 (route + session lookup, no relay)",
        url: `${holder}/wd/hub/session/${randomUUID()}/source`,
        kind: "unknown-session",
      },
      {
        label: "floor: the relay's hops alone (bare Node processes, no Testbay)",
        url: `http://127.0.0.1:${bare.port}/source`,
        kind: "bare-hops",
      },
    ];
    log(`appium: ${setup}: warm-up, ${plan.warmup} commands each`);
    await interleave(urls, plan.warmup, plan.timeLimitMs);
    log(`appium: ${setup}: ${plan.commands} getPageSource each, interleaved`);
    const measured = await interleave(urls, plan.commands, plan.timeLimitMs);
    await deleteSession(holder, id);
    await latencyRun.close();

    let concurrency: ConcurrencyResult | undefined;
    if (setup === "embedded") {
      const manyLab = await labOf(plan.sessions);
      scope.defer(() => manyLab.cleanup());
      const many = startAgent(set, manyLab, shared.appiumHome, path.join(dir, "agents"), "bench-concurrent");
      scope.defer(many.stop);
      concurrency = await concurrentSessions(holder, set, plan, many.agent.output, log);
    }
    return { latency: { setup, series: measured.series, bytes: measured.bytes }, concurrency };
  } finally {
    await scope.close();
  }
}

/**
 * The bare relay (bench/servers/bare-relay-front.ts and -back.ts) in front of the measured session's own Appium:
 * a client's `GET /source` there goes the relayed command's way (HTTP in, a WebSocket frame to a second process,
 * HTTP to Appium, back the same way) through processes that do nothing else.
 */
async function startBareRelay(
  direct: { base: string; appiumSessionId: string },
  dir: string,
  scope: CleanupScope,
): Promise<{ port: number }> {
  const front = await startServerProcess<BareRelayFrontReady & ReadyMessage>(
    {
      label: "bare-relay-front",
      entry: path.join(repoRoot, "bench/servers/bare-relay-front.ts"),
      stdoutFile: path.join(dir, "bare-relay-front.log"),
    },
    scope,
  );
  await startServerProcess<ReadyMessage>(
    {
      label: "bare-relay-back",
      entry: path.join(repoRoot, "bench/servers/bare-relay-back.ts"),
      env: {
        BARE_RELAY_FRONT: `ws://127.0.0.1:${front.ready.port}/`,
        BARE_RELAY_APPIUM: direct.base,
        BARE_RELAY_SESSION: direct.appiumSessionId,
      },
      stdoutFile: path.join(dir, "bare-relay-back.log"),
    },
    scope,
  );
  return { port: front.ready.port };
}

/** Stand-in Android devices for the fake driver (testbay:options.platform android). */
function labOf(devices: number): Promise<DeviceLab> {
  return createDeviceLab({
    devices: Array.from({ length: devices }, (_, i) => ({
      serial: `emulator-${5554 + 2 * i}`,
      model: "Pixel 7",
      release: "14",
      sdk: 34,
    })),
    timeScale: 0.05,
  });
}

interface ConcurrencyResult {
  sessions: number;
  opened: number;
  commands: number;
  errors: string[];
  openSeconds: number;
  commandMs: number[];
}

/** `sessions` sessions at once, each sending its commands one after the other; every failure is counted. */
async function concurrentSessions(
  origin: string,
  set: TestbaySet,
  plan: Plan,
  agentOutput: () => string,
  log: (line: string) => void,
): Promise<ConcurrencyResult> {
  log(`appium: ${plan.sessions} concurrent sessions, ${plan.commandsPerSession} getPageSource each`);
  const errors: string[] = [];
  const commandMs: number[] = [];
  let opened = 0;
  let commands = 0;
  const started = performance.now();
  let openSeconds = 0;
  const until = Date.now() + plan.timeLimitMs + 600_000;
  await Promise.all(
    Array.from({ length: plan.sessions }, async (_, i) => {
      let id: string;
      try {
        id = await newSession(origin, set, `bench concurrent ${i + 1}`, agentOutput);
      } catch (error) {
        errors.push(
          `session ${i + 1}: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`,
        );
        return;
      }
      opened++;
      openSeconds = Math.max(openSeconds, (performance.now() - started) / 1000);
      try {
        for (let c = 0; c < plan.commandsPerSession && Date.now() < until; c++) {
          const answer = await timedGet(`${origin}/wd/hub/session/${id}/source`);
          commands++;
          commandMs.push(answer.ms);
          if (answer.status !== 200) errors.push(`session ${i + 1}, command ${c + 1}: ${answer.status}`);
        }
      } catch (error) {
        errors.push(`session ${i + 1}: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        await deleteSession(origin, id).catch((error: Error) =>
          errors.push(`session ${i + 1}, delete: ${error.message}`),
        );
      }
    }),
  );
  return { sessions: plan.sessions, opened, commands, errors, openSeconds, commandMs };
}

/** Blocks of the run (the same rounds on both paths, as they were interleaved). */
const blocks = 5;

/** The added median block by block: a spread wider than the gap to the target means the run was noisy. */
function addedByBlock(relayed: readonly number[], direct: readonly number[]): number[] {
  const size = Math.ceil(direct.length / blocks);
  return Array.from({ length: blocks }, (_, b) => {
    const slice = (values: readonly number[]) => values.slice(b * size, (b + 1) * size);
    return median(slice(relayed)) - median(slice(direct));
  }).filter((v) => Number.isFinite(v));
}

const ms = (label: string, value: number) => ({ label, value, unit: "ms", decimals: 3 });

export async function run({ quick, log }: RunOptions): Promise<BenchResult> {
  const plan = quick ? plans.quick : plans.full;
  const startedAt = new Date();
  const loadAtStart = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
  const scope = new CleanupScope();
  try {
    const dir = await makeTempDir(name);
    scope.defer(() => rm(dir, { recursive: true, force: true }));
    log("appium: installing @appium/fake-driver into a temp APPIUM_HOME");
    const fake = await installFakeDriver();
    scope.defer(fake.cleanup);

    const results: LatencyResult[] = [];
    let concurrency: ConcurrencyResult | undefined;
    for (const setup of ["embedded", "scaled"] as const) {
      const measured = await measureLatency(setup, plan, { dir, appiumHome: fake.home }, log);
      results.push(measured.latency);
      concurrency ??= measured.concurrency;
    }

    const rows: Row[] = [];
    const ratios: Ratio[] = [];
    for (const result of results) {
      const [direct, ...relayed] = result.series;
      if (!direct) continue;
      const d = stats(direct.ms);
      for (const s of result.series) {
        const st = stats(s.ms);
        rows.push({
          label: `${result.setup}: ${s.label}`,
          metrics: [
            { label: "commands", value: s.ms.length, unit: "" },
            ms("p50", st.p50),
            ms("p90", st.p90),
            ms("p99", st.p99),
            ms("added p50", st.p50 - d.p50),
          ],
        });
      }
      const bare = relayed.find((r) => r.kind === "bare-hops");
      for (const s of relayed.filter((r) => r.kind === "measured")) {
        const forwarded = s.label.includes("forwarded");
        const target = result.setup === "embedded" ? embeddedTarget : forwarded ? forwardedTarget : undefined;
        ratios.push(
          ratio(
            `${result.setup}: ${s.label} − direct, added median ms`,
            stats(s.ms).p50 - d.p50,
            target,
            addedByBlock(s.ms, direct.ms),
          ),
        );
        // What Testbay's own code adds over the same hops: informational, as the floor is this machine's.
        if (bare && !forwarded) {
          ratios.push(
            ratio(
              `${result.setup}: ${s.label} − the hops alone, Testbay's own part, ms`,
              stats(s.ms).p50 - stats(bare.ms).p50,
              undefined,
              addedByBlock(s.ms, bare.ms),
            ),
          );
        }
      }
    }
    const sections: Section[] = [];
    if (concurrency) {
      const st = stats(concurrency.commandMs);
      sections.push({
        title: `${concurrency.sessions} concurrent sessions (embedded)`,
        rows: [
          {
            label: "sessions at once",
            metrics: [
              { label: "opened", value: concurrency.opened, unit: "" },
              { label: "commands", value: concurrency.commands, unit: "" },
              { label: "errors", value: concurrency.errors.length, unit: "" },
              { label: "all open after", value: concurrency.openSeconds, unit: "s", decimals: 1 },
              ms("command p50", st.p50),
              ms("command p99", st.p99),
            ],
          },
        ],
      });
      ratios.push(
        ratio(`${concurrency.sessions} concurrent sessions: errors`, concurrency.errors.length, {
          op: "<=",
          value: 0,
        }),
      );
    }
    const notes = [
      `client: Node's fetch (undici, keep-alive), one command at a time, timed to the answer's last byte; commands carry no credentials (only the new session has HTTP Basic), as webdriverio sends them`,
      `command: GET /session/{id}/source (getPageSource) of @appium/fake-driver's app (${results[0]?.bytes ?? 0} characters); direct = the same session on the Appium the agent started for it (its port and the Appium session ID read from its command line and log: the same Appium, the same flags), relayed = through /wd/hub`,
      `floors (no target): an unknown session's 404 (one HTTP hop into the server, its route and session lookup); and the relay's hops alone: bench/servers/bare-relay-front.ts (Node's HTTP server, a WebSocket frame per command) and bare-relay-back.ts (in the agent's place: undici to the same Appium session, the answer back up), processes that do nothing else; "Testbay's own part" = relayed − that floor`,
      `interleaved: each round sends one command on every path, the order rotated round by round ("by round": the added median in each fifth of the run); ${plan.warmup} warm-up rounds, then ${plan.commands} measured (bounded to ${plan.timeLimitMs / 1000} s)`,
      "embedded: one instance on SQLite; scaled: two instances on one PostgreSQL database (127.0.0.1:5432) and Redis (127.0.0.1:6379), the agent's channel on the first, the forwarded commands sent to the second",
      `agent: bin/testbay-agent.js --appium (the repository's Appium) with APPIUM_HOME holding @appium/fake-driver, on stand-in adb devices (timeScale 0.05), record_video false; one device (and the agent watching only it) for the latency, another agent with ${plan.sessions} devices for the concurrent sessions`,
      `load average (1, 5, 15 min): ${loadAtStart} at start, ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(
          " ",
        )} at end, on ${os.cpus().length} CPUs; not pinned (Appium, agent, server and client share the CPUs)`,
    ];
    if (concurrency && concurrency.errors.length > 0)
      notes.push(`errors: ${concurrency.errors.slice(0, 5).join("; ")}`);
    return benchResult(quick, startedAt, {
      name,
      description,
      environment: { node: process.version, cpus: os.cpus().length, loadAtStart },
      rows,
      sections,
      ratios,
      notes,
      details: { results, concurrency },
    });
  } finally {
    await scope.close();
  }
}
