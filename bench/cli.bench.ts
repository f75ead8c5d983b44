// What shipping compiled code buys: the cold start of the bundled CLI (`node testbay.mjs --version`) against
// `node -e 0` in the same run, and the time from starting `testbay-server start` to its first `/readyz` 200,
// compiled (dist/, as `npm start` runs it) against the TypeScript sources under tsx (as before issue 13).
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { benchResult } from "./lib/bench-result.ts";
import { CleanupScope } from "./lib/cleanup.ts";
import { repoRoot } from "./lib/paths.ts";
import { median } from "./lib/stats.ts";
import { makeTempDir } from "./lib/temp-dir.ts";
import { type BenchResult, type RunOptions, ratio, type Target } from "./lib/types.ts";

export const name = "cli";
export const description =
  "cold start of the bundled CLI against node -e 0, and server start to /readyz compiled against tsx";

const cliTarget: Target = { op: "<=", value: 1.5 };
const plans = { full: { cliRuns: 30, serverRuns: 5 }, quick: { cliRuns: 6, serverRuns: 2 } };
const bundle = path.join(repoRoot, "packages/client/dist/testbay.mjs");
const serverBin = path.join(repoRoot, "packages/server/bin/testbay-server.js");

/** Wall time of one process from spawn to exit, in ms; throws unless it exits 0. */
function timed(args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  const ms = performance.now() - started;
  if (result.status !== 0)
    throw new Error(`node ${args.join(" ")} exited ${result.status}: ${result.stderr}`);
  return ms;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject()));
    });
  });
}

/** Starts the server (compiled or from sources) and returns ms until /readyz answers 200; stops it again. */
async function startToReady(dataDir: string, fromSources: boolean): Promise<number> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TESTBAY_DATA_DIR: dataDir,
    TESTBAY_PORT: String(port),
    TESTBAY_HOST: "127.0.0.1",
    TESTBAY_LOG_LEVEL: "warn",
    TESTBAY_LOCAL_AGENT: "false",
    ...(fromSources ? { NODE_OPTIONS: "--conditions=source" } : {}),
  };
  const started = performance.now();
  const child = spawn(process.execPath, ["--initial-old-space-size=128", serverBin, "start"], {
    env,
    stdio: "ignore",
  });
  try {
    const deadline = started + 60_000;
    for (;;) {
      if (performance.now() > deadline) throw new Error("the server did not become ready in 60 s");
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
  }
}

export async function run({ quick, log }: RunOptions): Promise<BenchResult> {
  const plan = quick ? plans.quick : plans.full;
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run npm run build first`);
  const startedAt = new Date();
  const scope = new CleanupScope();
  try {
    // The child processes must not inherit the bench's own --conditions=source: the CLI runs as shipped.
    const plain = { ...process.env, NODE_OPTIONS: "" };
    log(`cold starts: ${plan.cliRuns} × (node -e 0, node testbay.mjs --version), alternating`);
    timed(["-e", "0"], plain);
    timed([bundle, "--version"], plain);
    const bare: number[] = [];
    const cli: number[] = [];
    for (let i = 0; i < plan.cliRuns; i++) {
      bare.push(timed(["-e", "0"], plain));
      cli.push(timed([bundle, "--version"], plain));
    }

    const dir = await makeTempDir(name);
    scope.defer(() => rm(dir, { recursive: true, force: true }));
    const compiled: number[] = [];
    const sources: number[] = [];
    for (let i = 0; i < plan.serverRuns; i++) {
      log(
        `server start to /readyz, round ${i + 1}/${plan.serverRuns}: compiled, then from sources under tsx`,
      );
      // Each start on an existing data dir (migrated, key made), as a restart is: the first start of all is
      // a warm-up that creates it.
      if (i === 0) await startToReady(path.join(dir, "data"), false);
      compiled.push(await startToReady(path.join(dir, "data"), false));
      sources.push(await startToReady(path.join(dir, "data"), true));
    }

    const cliRatio = median(cli) / median(bare);
    const serverRatio = median(compiled) / median(sources);
    return benchResult(quick, startedAt, {
      name,
      description,
      environment: { node: process.version, cli_runs: plan.cliRuns, server_runs: plan.serverRuns },
      rows: [
        row("node -e 0 (baseline)", bare),
        row("node testbay.mjs --version (bundled CLI)", cli),
        row("testbay-server start → /readyz 200, compiled", compiled),
        row("testbay-server start → /readyz 200, sources under tsx", sources),
      ],
      ratios: [
        ratio("testbay.mjs --version ÷ node -e 0", cliRatio, cliTarget),
        ratio("server start, compiled ÷ tsx", serverRatio),
      ],
      notes: [
        "Cold starts alternate the two commands, each a new process from spawn to exit; medians.",
        "Server starts reuse one migrated data dir (a restart), SQLite, no local agent, until /readyz answers 200 (polled every 10 ms).",
      ],
      details: { bare, cli, compiled, sources },
    });
  } finally {
    await scope.close();
  }
}

function row(label: string, ms: readonly number[]) {
  return {
    label,
    metrics: [
      { label: "median", value: median(ms), unit: "ms", decimals: 1 },
      { label: "min", value: Math.min(...ms), unit: "ms", decimals: 1 },
      { label: "max", value: Math.max(...ms), unit: "ms", decimals: 1 },
    ],
  };
}
