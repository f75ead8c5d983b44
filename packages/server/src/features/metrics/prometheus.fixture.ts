/**
 * Debian's real `prometheus` (package `prometheus`, which brings `promtool`), started for one test file: it
 * scrapes one target every second with the bearer token the server wants, and answers queries over its HTTP
 * API, as an operator's Prometheus would (docs/operating.md, Metrics). No stand-in: what the server exposes must
 * be what a real Prometheus reads.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export interface PrometheusProcess {
  /** The value of an instant query that returns one sample; undefined while it returns none. */
  value(query: string): Promise<number | undefined>;
  /** Every sample an instant query returns, as its labels and value. */
  query(query: string): Promise<Array<{ metric: Record<string, string>; value: number }>>;
  stop(): Promise<void>;
}

const startTimeoutMs = 20_000;

/** Awaits `check` until it returns a value (polling every 100 ms, at most `timeoutMs`), naming `what` if never. */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return address.port;
}

export async function startPrometheus(target: {
  host: string;
  port: number;
  token: string;
}): Promise<PrometheusProcess> {
  const dir = await mkdtemp(path.join(tmpdir(), "testbay-prometheus-"));
  const port = await freePort();
  await writeFile(
    path.join(dir, "prometheus.yml"),
    [
      "global:",
      "  scrape_interval: 1s",
      "  scrape_timeout: 1s",
      "scrape_configs:",
      "  - job_name: testbay",
      "    metrics_path: /metrics",
      "    authorization:",
      `      credentials: ${JSON.stringify(target.token)}`,
      "    static_configs:",
      `      - targets: [${JSON.stringify(`${target.host}:${target.port}`)}]`,
      "",
    ].join("\n"),
  );
  const child: ChildProcess = spawn(
    "prometheus",
    [
      `--config.file=${path.join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${path.join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  const stderr: string[] = [];
  child.stderr?.on("data", (chunk) => stderr.push(String(chunk)));
  let exited = false;
  const closed = new Promise<void>((resolve) => {
    child.once("error", (error) => {
      stderr.push(`${error.message} (install Debian's package: apt-get install prometheus)`);
      exited = true;
      resolve();
    });
    child.once("exit", () => {
      exited = true;
      resolve();
    });
  });
  const origin = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (!exited) child.kill("SIGTERM");
    await closed;
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await until(
      "prometheus to be ready",
      async () => {
        if (exited) throw new Error(`prometheus exited: ${stderr.join("").slice(-2000)}`);
        return await fetch(`${origin}/-/ready`).then(
          (response) => response.ok,
          () => false,
        );
      },
      startTimeoutMs,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  const query = async (expression: string) => {
    const response = await fetch(`${origin}/api/v1/query?${new URLSearchParams({ query: expression })}`);
    const body = (await response.json()) as {
      status: string;
      error?: string;
      data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
    };
    if (body.status !== "success") throw new Error(`query ${expression} failed: ${body.error}`);
    return body.data.result.map((sample) => ({ metric: sample.metric, value: Number(sample.value[1]) }));
  };
  return {
    query,
    async value(expression) {
      const samples = await query(expression);
      if (samples.length > 1) throw new Error(`query ${expression} returned ${samples.length} samples`);
      return samples[0]?.value;
    },
    stop,
  };
}

/** `promtool check metrics` on an exposition: its complaints, empty when it passes. */
export function promtoolComplaints(exposition: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile("promtool", ["check", "metrics"], (error, stdout, stderr) => {
      if (error && typeof error.code !== "number") reject(error);
      else resolve(`${stdout}${stderr}`.trim());
    });
    child.stdin?.end(exposition);
  });
}

/** `promtool check rules` on a rules file's text: its complaints, empty when every expression parses. */
export async function promtoolRuleComplaints(rules: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "testbay-rules-"));
  try {
    const file = path.join(dir, "rules.yml");
    await writeFile(file, rules);
    return await new Promise((resolve, reject) => {
      execFile("promtool", ["check", "rules", file], (error, stdout, stderr) => {
        if (error && typeof error.code !== "number") reject(error);
        else resolve(error ? `${stdout}${stderr}`.trim() : "");
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
