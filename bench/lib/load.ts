import autocannon from "autocannon";
import { machineCpuSeconds, ownCpuSeconds, processCpuSeconds } from "./cpu.ts";
import { percentile } from "./stats.ts";

export interface LoadOptions {
  url: string;
  headers?: Record<string, string>;
  connections: number;
  pipelining: number;
  durationSeconds: number;
  /** The server process, to report the CPU it used during the run. */
  serverPid?: number;
}

export interface LoadRun {
  requestsPerSecond: number;
  /** Responses of any status. */
  completed: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  durationSeconds: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  /** CPU the server used, in % of one core (100 = one core busy all the time). */
  serverCpuPercent: number | undefined;
  /** CPU this process (autocannon) used, in % of one core. */
  loadgenCpuPercent: number;
  /** CPU every other process on the machine used meanwhile, in % of one core: noise from outside the benchmark. */
  otherCpuPercent: number | undefined;
}

/**
 * One autocannon run against 127.0.0.1. Latency percentiles are computed here from every 2xx response's time,
 * at full resolution (autocannon's own histogram keeps whole milliseconds only).
 */
export async function runLoad(options: LoadOptions): Promise<LoadRun> {
  const { hostname } = new URL(options.url);
  if (hostname !== "127.0.0.1") throw new Error(`benchmarks target 127.0.0.1 only, not ${hostname}`);

  const times: number[] = [];
  let completed = 0;
  const serverCpuBefore = options.serverPid === undefined ? undefined : processCpuSeconds(options.serverPid);
  const ownCpuBefore = ownCpuSeconds();
  const machineCpuBefore = machineCpuSeconds();
  const wallBefore = performance.now();

  const instance = autocannon({
    url: options.url,
    connections: options.connections,
    pipelining: options.pipelining,
    duration: options.durationSeconds,
    ...(options.headers && { headers: options.headers }),
  });
  instance.on("response", (_client, statusCode, _bytes, responseTimeMs) => {
    completed++;
    if (statusCode >= 200 && statusCode < 300) times.push(responseTimeMs);
  });
  const result = await instance;

  const wallSeconds = (performance.now() - wallBefore) / 1000;
  const serverCpuAfter = options.serverPid === undefined ? undefined : processCpuSeconds(options.serverPid);
  const machineCpuAfter = machineCpuSeconds();
  const ownCpu = ownCpuSeconds() - ownCpuBefore;
  const serverCpu =
    serverCpuBefore === undefined || serverCpuAfter === undefined
      ? undefined
      : serverCpuAfter - serverCpuBefore;
  const machineCpu =
    machineCpuBefore === undefined || machineCpuAfter === undefined
      ? undefined
      : machineCpuAfter - machineCpuBefore;
  const percent = (seconds: number | undefined) =>
    seconds === undefined ? undefined : (seconds / wallSeconds) * 100;

  const sorted = Float64Array.from(times).sort();
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count;
  return {
    requestsPerSecond: times.length / result.duration,
    completed,
    ok: times.length,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    durationSeconds: result.duration,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    meanMs: times.reduce((sum, t) => sum + t, 0) / Math.max(1, times.length),
    serverCpuPercent: percent(serverCpu),
    loadgenCpuPercent: (ownCpu / wallSeconds) * 100,
    otherCpuPercent:
      machineCpu === undefined || serverCpu === undefined
        ? undefined
        : Math.max(0, percent(machineCpu - serverCpu - ownCpu) ?? 0),
  };
}

/** Throws when a run saw anything but 2xx: a benchmark of error responses measures the wrong thing. */
export function assertAllOk(label: string, run: LoadRun): void {
  if (run.non2xx === 0 && run.errors === 0 && run.ok > 0) return;
  const codes = Object.entries(run.statusCodes)
    .map(([code, count]) => `${code}×${count}`)
    .join(", ");
  throw new Error(
    `${label}: ${run.ok} ok, ${run.non2xx} non-2xx (${codes || "none"}), ${run.errors} errors (${run.timeouts} timeouts): results invalid`,
  );
}
