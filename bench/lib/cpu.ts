import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** CPU time (user + system, all threads) a process has used so far, in seconds; undefined off Linux. */
export function processCpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks / clockTicksPerSecond() : undefined;
  } catch {
    return undefined;
  }
}

let ticksPerSecond: number | undefined;
function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/**
 * CPU time every process on the machine has used so far (user + system, all CPUs), in seconds; undefined off
 * Linux. Interrupt time is left out: the kernel's loopback work for a benchmark lands there.
 */
export function machineCpuSeconds(): number | undefined {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "";
    // cpu  user nice system idle iowait irq softirq steal
    const [, user, nice, system] = line.trim().split(/\s+/).map(Number);
    const ticks = (user ?? Number.NaN) + (nice ?? Number.NaN) + (system ?? Number.NaN);
    return Number.isFinite(ticks) ? ticks / clockTicksPerSecond() : undefined;
  } catch {
    return undefined;
  }
}

/** This process's CPU time so far (all threads), in seconds. */
export function ownCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/** "0-2,5" → [0, 1, 2, 5] */
export function parseCpuList(list: string): number[] {
  const cpus: number[] = [];
  for (const part of list.trim().split(",")) {
    const [from, to = from] = part.split("-").map(Number);
    if (from === undefined || to === undefined || Number.isNaN(from) || Number.isNaN(to)) continue;
    for (let cpu = from; cpu <= to; cpu++) cpus.push(cpu);
  }
  return cpus;
}

export interface Pinning {
  /** CPU the servers run on (pass to `taskset -c`). */
  serverCpu: number;
  /** CPU this process, the load generator, is moved to. */
  loadgenCpu: number;
  restore(): void;
}

/**
 * Moves this process (the load generator) to one CPU and reserves another for the server under test, so a
 * server is measured on exactly one core and never competes with the load generator. `{ reason }` when
 * that cannot be done (not Linux, no taskset, fewer than two CPUs).
 */
export function pinLoadGenerator(): Pinning | { reason: string } {
  if (process.platform !== "linux") return { reason: `not Linux (${process.platform})` };
  let current: number[];
  let original: string;
  try {
    // "pid 123's current affinity list: 0,1"
    const out = execFileSync("taskset", ["-pc", String(process.pid)], { encoding: "utf8" });
    original = out.slice(out.lastIndexOf(":") + 1).trim();
    current = parseCpuList(original);
  } catch {
    return { reason: "taskset is not available (Debian package util-linux)" };
  }
  const [loadgenCpu, serverCpu] = current;
  if (loadgenCpu === undefined || serverCpu === undefined) {
    return { reason: `this process may use only CPU ${original}` };
  }
  const setAffinity = (list: string) =>
    execFileSync("taskset", ["-a", "-pc", list, String(process.pid)], { stdio: "ignore" });
  try {
    setAffinity(String(loadgenCpu));
  } catch (error) {
    return { reason: `taskset failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  return { serverCpu, loadgenCpu, restore: () => setAffinity(original) };
}

/**
 * Time one CPU has spent busy so far (user, nice, system, irq, softirq: whatever ran on it, the kernel's
 * network work included), in seconds; undefined off Linux.
 */
export function cpuBusySeconds(cpu: number): number | undefined {
  try {
    const line = readFileSync("/proc/stat", "utf8")
      .split("\n")
      .find((l) => l.startsWith(`cpu${cpu} `));
    if (!line) return undefined;
    // cpuN user nice system idle iowait irq softirq steal
    const [, user, nice, system, , , irq, softirq] = line.trim().split(/\s+/).map(Number);
    const ticks = [user, nice, system, irq, softirq].reduce<number>((sum, t) => sum + (t ?? Number.NaN), 0);
    return Number.isFinite(ticks) ? ticks / clockTicksPerSecond() : undefined;
  } catch {
    return undefined;
  }
}
