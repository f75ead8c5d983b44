// autocannon ships no types; @types/autocannon describes v7. Only what bench/lib/load.ts uses is declared.
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  export interface Options {
    url: string;
    connections?: number;
    pipelining?: number;
    /** Seconds; fractions work. */
    duration?: number;
    headers?: Record<string, string>;
    method?: string;
    /** Seconds before a request counts as timed out. */
    timeout?: number;
  }

  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total?: number;
    p50: number;
    p99: number;
  }

  export interface Result {
    url: string;
    connections: number;
    pipelining: number;
    /** Seconds actually run, to 10 ms. */
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    resets: number;
    "2xx": number;
    statusCodeStats: Record<string, { count: number }>;
    /** Milliseconds, whole: autocannon's histogram drops fractions. */
    latency: Histogram;
    requests: Histogram & { sent: number };
    throughput: Histogram;
  }

  export interface Instance extends EventEmitter, PromiseLike<Result> {
    stop(): void;
    on(
      event: "response",
      listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void,
    ): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  export default function autocannon(options: Options): Instance;
}
