// What Linux's /proc says about another process: its memory (status) and the bytes it read (io).
import { readFileSync } from "node:fs";

export interface MemoryStatus {
  /** Resident set size now, in bytes (VmRSS). */
  rss: number;
  /** The highest RSS since the process started, in bytes (VmHWM): it cannot be reset. */
  hwm: number;
}

/** VmRSS and VmHWM of `pid`; undefined when /proc cannot tell (not Linux, the process is gone). */
export function memoryStatus(pid: number): MemoryStatus | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1]);
    const rss = kib("VmRSS");
    const hwm = kib("VmHWM");
    return Number.isFinite(rss) && Number.isFinite(hwm) ? { rss: rss * 1024, hwm: hwm * 1024 } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Bytes `pid` (all its threads) has passed through read-like system calls so far: /proc/PID/io `rchar`,
 * which counts socket reads as well as file reads (whether or not the file data came from the page cache).
 * Undefined when the kernel keeps no I/O accounting or the process is gone.
 */
export function bytesRead(pid: number): number | undefined {
  try {
    const io = readFileSync(`/proc/${pid}/io`, "utf8");
    const rchar = Number(/^rchar:\s+(\d+)$/m.exec(io)?.[1]);
    return Number.isFinite(rchar) ? rchar : undefined;
  } catch {
    return undefined;
  }
}

export interface RssPeak {
  /** RSS just before sampling started, in bytes. */
  before: number;
  /** The highest RSS seen: sampled, or VmHWM when that rose meanwhile (then it is the exact peak). */
  peak: number;
  /** peak − before. */
  growth: number;
  /** True when VmHWM rose during the sampling, so `peak` is exact rather than sampled. */
  exact: boolean;
  samples: number;
  /** Longest time between two samples, in ms: a peak shorter than this may have been missed. */
  longestGapMs: number;
}

/**
 * Samples a process's VmRSS every `intervalMs` until `stop()`. VmHWM is read at both ends too: if it rose,
 * the process reached a new all-time peak meanwhile and VmHWM is that peak exactly, even between samples.
 */
export class RssSampler {
  private readonly start: MemoryStatus;
  private maxRss: number;
  private samples = 0;
  private longestGapMs = 0;
  private last = performance.now();
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly pid: number,
    start: MemoryStatus,
    intervalMs: number,
  ) {
    this.start = start;
    this.maxRss = start.rss;
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  /** Undefined when /proc cannot tell. */
  static begin(pid: number, intervalMs = 20): RssSampler | undefined {
    const start = memoryStatus(pid);
    return start && new RssSampler(pid, start, intervalMs);
  }

  private sample(): MemoryStatus | undefined {
    const now = performance.now();
    this.longestGapMs = Math.max(this.longestGapMs, now - this.last);
    this.last = now;
    const status = memoryStatus(this.pid);
    if (status) {
      this.samples++;
      this.maxRss = Math.max(this.maxRss, status.rss);
    }
    return status;
  }

  stop(): RssPeak {
    clearInterval(this.timer);
    const end = this.sample();
    const hwmRose = end !== undefined && end.hwm > this.start.hwm;
    const peak = hwmRose ? Math.max(end.hwm, this.maxRss) : this.maxRss;
    return {
      before: this.start.rss,
      peak,
      growth: peak - this.start.rss,
      exact: hwmRose,
      samples: this.samples,
      longestGapMs: this.longestGapMs,
    };
  }
}
