// Concurrent loops over keep-alive connections, one connection per loop: N clients calling GET /v1/me at
// once (the baseline), and N agents draining the queue (claim, then complete as passed, until a claim
// answers 204). Every loop is bounded in count and in time.
import { machineCpuSeconds, ownCpuSeconds, processCpuSeconds } from "./cpu.ts";
import type { SequentialClient, SequentialRequest } from "./sequential.ts";

export interface CpuWindow {
  /** CPU the server process used, % of one core. */
  serverPercent: number | undefined;
  /** CPU this process (the clients) used, % of one core. */
  clientPercent: number;
  /** CPU the database's own processes used (PostgreSQL backends serving the server), % of one core. */
  databasePercent: number | undefined;
  /** CPU every other process used, % of one core: noise from outside the benchmark. */
  otherPercent: number | undefined;
}

/** The processes of the database that serve the server (PostgreSQL backends); none for SQLite. */
export type DatabasePids = () => Promise<number[]>;

/** CPU seconds of these processes so far, by pid (those that are gone are left out). */
function cpuByPid(pids: readonly number[]): Map<number, number> {
  const used = new Map<number, number>();
  for (const pid of pids) {
    const seconds = processCpuSeconds(pid);
    if (seconds !== undefined) used.set(pid, seconds);
  }
  return used;
}

/**
 * Measures CPU use over a window of wall time: await the result at its end. A database process that
 * started during the window counts whole; one that ended during it is lost (PostgreSQL's pooled backends
 * live on, so that is rare).
 */
export async function cpuWindow(
  serverPid: number,
  databasePids?: DatabasePids,
): Promise<() => Promise<CpuWindow>> {
  const databaseBefore = databasePids ? cpuByPid(await databasePids()) : undefined;
  const started = performance.now();
  const server = processCpuSeconds(serverPid);
  const own = ownCpuSeconds();
  const machine = machineCpuSeconds();
  return async () => {
    const seconds = (performance.now() - started) / 1000;
    const serverUsed =
      server === undefined ? undefined : (processCpuSeconds(serverPid) ?? Number.NaN) - server;
    const ownUsed = ownCpuSeconds() - own;
    const machineNow = machineCpuSeconds();
    let databaseUsed: number | undefined;
    if (databasePids && databaseBefore) {
      databaseUsed = 0;
      for (const [pid, now] of cpuByPid(await databasePids())) {
        databaseUsed += now - (databaseBefore.get(pid) ?? 0);
      }
    }
    const otherUsed =
      machine === undefined || machineNow === undefined || serverUsed === undefined
        ? undefined
        : Math.max(0, machineNow - machine - serverUsed - ownUsed - (databaseUsed ?? 0));
    const percent = (used: number | undefined) => (used === undefined ? undefined : (used / seconds) * 100);
    return {
      serverPercent: percent(serverUsed),
      clientPercent: (ownUsed / seconds) * 100,
      databasePercent: percent(databaseUsed),
      otherPercent: percent(otherUsed),
    };
  };
}

export interface ConcurrentSeries {
  /** Every request's time in ms, in the order the responses came. */
  times: number[];
  /** Wall time from the first request to the last response. */
  ms: number;
  cpu: CpuWindow;
  cutShort: boolean;
}

/** Two series as one: their times together, over their wall times added, CPU weighted by wall time. */
export function mergeSeries(a: ConcurrentSeries, b: ConcurrentSeries): ConcurrentSeries {
  const ms = a.ms + b.ms;
  const weigh = (x: number | undefined, y: number | undefined) =>
    x === undefined || y === undefined ? undefined : (x * a.ms + y * b.ms) / ms;
  return {
    times: [...a.times, ...b.times],
    ms,
    cpu: {
      serverPercent: weigh(a.cpu.serverPercent, b.cpu.serverPercent),
      clientPercent: weigh(a.cpu.clientPercent, b.cpu.clientPercent) as number,
      databasePercent: weigh(a.cpu.databasePercent, b.cpu.databasePercent),
      otherPercent: weigh(a.cpu.otherPercent, b.cpu.otherPercent),
    },
    cutShort: a.cutShort || b.cutShort,
  };
}

/** `perClient` requests on each client, all clients at once, each one request at a time. */
export async function concurrentSeries(
  label: string,
  clients: readonly SequentialClient[],
  request: SequentialRequest,
  options: { perClient: number; maxSeconds: number; serverPid: number; databasePids?: DatabasePids },
): Promise<ConcurrentSeries> {
  const times: number[] = [];
  const cpu = await cpuWindow(options.serverPid, options.databasePids);
  const started = performance.now();
  const deadline = started + options.maxSeconds * 1000;
  let cutShort = false;
  let failed: Error | undefined;
  await Promise.all(
    clients.map(async (client) => {
      for (let i = 0; i < options.perClient && !failed; i++) {
        if (performance.now() > deadline) {
          cutShort = true;
          return;
        }
        const response = await client.send(request);
        if (response.status !== 200) {
          failed ??= new Error(
            `${label}: answered ${response.status}: ${response.body.toString("utf8").slice(0, 500)}`,
          );
          return;
        }
        times.push(response.ms);
      }
    }),
  );
  if (failed) throw failed;
  const ms = performance.now() - started;
  return { times, ms, cpu: await cpu(), cutShort };
}

export interface Claimed {
  agent: number;
  deviceRunId: string;
  executionId: string;
  leaseId: string;
  /** The claim's time, ms. */
  claimMs: number;
  /** The complete's time, ms. */
  completeMs: number;
}

export interface Drain {
  /** Every claim that handed out a job, in the order the claims were answered. */
  claimed: Claimed[];
  /** Claims answered 204 (each agent stops at its first). */
  empty: number;
  /** Times of the 204 answers, ms. */
  emptyMs: number[];
  /** From the first claim to the last agent's 204. */
  ms: number;
  cpu: CpuWindow;
  /** Agents stopped by the time bound with work possibly left. */
  cutShort: boolean;
  /** Size of the first job response, bytes. */
  jobBytes: number;
  /** Completions whose answer was not status passed / execution passed (the first few). */
  oddCompletions: string[];
}

interface ClaimAnswer {
  job?: { lease_id?: string; execution_id?: string; device_run?: { id?: string } };
}

/**
 * One agent per client (agent_id = `${agentPrefix}-${index}`): claim with wait_seconds 0, complete as
 * passed, until a claim answers 204, at most `maxClaimsPerAgent` claims and `maxSeconds` in all. Any other
 * answer stops every agent and fails the drain.
 */
export async function drainQueue(
  label: string,
  agents: readonly SequentialClient[],
  options: {
    agentPrefix: string;
    maxClaimsPerAgent: number;
    maxSeconds: number;
    serverPid: number;
    databasePids?: DatabasePids;
  },
): Promise<Drain> {
  const claimed: Claimed[] = [];
  const emptyMs: number[] = [];
  const oddCompletions: string[] = [];
  const cpu = await cpuWindow(options.serverPid, options.databasePids);
  const started = performance.now();
  const deadline = started + options.maxSeconds * 1000;
  let cutShort = false;
  let jobBytes = 0;
  let failed: Error | undefined;
  const fail = (what: string, status: number, body: Buffer) => {
    failed ??= new Error(`${label}: ${what} answered ${status}: ${body.toString("utf8").slice(0, 500)}`);
  };
  await Promise.all(
    agents.map(async (client, agent) => {
      const claimRequest: SequentialRequest = {
        method: "POST",
        path: "/v1/agent/claim",
        body: JSON.stringify({
          agent_id: `${options.agentPrefix}-${agent}`,
          devices: [],
          host: true,
          step_types: ["inspect"],
          wait_seconds: 0,
        }),
      };
      for (let i = 0; i < options.maxClaimsPerAgent && !failed; i++) {
        if (performance.now() > deadline) {
          cutShort = true;
          return;
        }
        const claim = await client.send(claimRequest);
        if (claim.status === 204) {
          emptyMs.push(claim.ms);
          return;
        }
        if (claim.status !== 200) return fail("a claim", claim.status, claim.body);
        const job = (JSON.parse(claim.body.toString("utf8")) as ClaimAnswer).job;
        const leaseId = job?.lease_id;
        const deviceRunId = job?.device_run?.id;
        const executionId = job?.execution_id;
        if (!leaseId || !deviceRunId || !executionId) return fail("a claim (no job in it)", 200, claim.body);
        if (jobBytes === 0) jobBytes = claim.body.length;
        const record: Claimed = {
          agent,
          deviceRunId,
          executionId,
          leaseId,
          claimMs: claim.ms,
          completeMs: Number.NaN,
        };
        claimed.push(record);
        const complete = await client.send({
          method: "POST",
          path: `/v1/agent/jobs/${encodeURIComponent(leaseId)}/complete`,
          body: '{"status":"passed"}',
        });
        if (complete.status !== 200) return fail(`complete of ${leaseId}`, complete.status, complete.body);
        const done = JSON.parse(complete.body.toString("utf8")) as {
          status?: string;
          execution_status?: string;
        };
        if ((done.status !== "passed" || done.execution_status !== "passed") && oddCompletions.length < 10) {
          oddCompletions.push(`${deviceRunId}: ${complete.body.toString("utf8").slice(0, 200)}`);
        }
        record.completeMs = complete.ms;
      }
      // The count bound ran out before a 204: there may be work left.
      if (!failed) cutShort = true;
    }),
  );
  if (failed) throw failed;
  const ms = performance.now() - started;
  return {
    claimed,
    empty: emptyMs.length,
    emptyMs,
    ms,
    cpu: await cpu(),
    cutShort,
    jobBytes,
    oddCompletions,
  };
}
