// The benchmark runner: `npm run bench` runs every bench/<name>.bench.ts, `npm run bench -- NAME…` some.

import { mkdir, readdir, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { closeAllScopes } from "./lib/cleanup.ts";
import { formatResult } from "./lib/format.ts";
import { benchDir, resultsDir } from "./lib/paths.ts";
import type { Benchmark, BenchResult } from "./lib/types.ts";

const usage = `Usage: npm run bench [-- [NAME…] [--quick] [--json] [--list]]

  NAME     run only these benchmarks (default: all of them)
  --quick  short durations: checks the harness works, numbers not worth quoting
  --json   print the results as a JSON array instead of tables
  --list   list the benchmarks and exit

Each result is also written to bench/results/NAME.json. Progress goes to stderr.
The exit code is 0 when every benchmark ran, whether or not it met its targets; 1 when one failed to run.`;

function isBenchmark(module: Record<string, unknown>): boolean {
  return (
    typeof module.name === "string" &&
    typeof module.description === "string" &&
    typeof module.run === "function"
  );
}

/** Every bench/<name>.bench.ts, by name. */
async function discover(): Promise<Benchmark[]> {
  const files = (await readdir(benchDir)).filter((file) => file.endsWith(".bench.ts")).sort();
  const benchmarks: Benchmark[] = [];
  for (const file of files) {
    const module = (await import(pathToFileURL(path.join(benchDir, file)).href)) as Record<string, unknown>;
    if (!isBenchmark(module)) {
      throw new Error(`bench/${file} must export name, description and run(options): Promise<BenchResult>`);
    }
    const benchmark = module as unknown as Benchmark;
    const expected = file.slice(0, -".bench.ts".length);
    if (benchmark.name !== expected) {
      throw new Error(`bench/${file} exports name ${JSON.stringify(benchmark.name)}; expected "${expected}"`);
    }
    benchmarks.push(benchmark);
  }
  return benchmarks;
}

function environment(): Record<string, string> {
  const require = createRequire(import.meta.url);
  return { autocannon: (require("autocannon/package.json") as { version: string }).version };
}

const parse = () =>
  parseArgs({
    allowPositionals: true,
    options: {
      quick: { type: "boolean", default: false },
      json: { type: "boolean", default: false },
      list: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });

async function main(): Promise<number> {
  let args: ReturnType<typeof parse>;
  try {
    args = parse();
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    return 2;
  }
  if (args.values.help) {
    console.log(usage);
    return 0;
  }

  const all = await discover();
  const list = all.map((b) => `  ${b.name.padEnd(12)} ${b.description}`).join("\n");
  if (args.values.list) {
    console.log(list);
    return 0;
  }
  const unknown = args.positionals.filter((name) => !all.some((b) => b.name === name));
  if (unknown.length > 0) {
    console.error(`No benchmark named ${unknown.join(", ")}. There are:\n${list}`);
    return 2;
  }
  const chosen = args.positionals.length > 0 ? all.filter((b) => args.positionals.includes(b.name)) : all;
  if (args.positionals.length === 0) console.error(`Running every benchmark:\n${list}\n`);

  const quick = args.values.quick;
  const color = !args.values.json && process.stdout.isTTY === true && !process.env.NO_COLOR;
  const results: BenchResult[] = [];
  let failed = 0;
  await mkdir(resultsDir, { recursive: true });
  for (const benchmark of chosen) {
    console.error(`▶ ${benchmark.name}${quick ? " (quick)" : ""}`);
    try {
      const result = await benchmark.run({ quick, log: (line) => console.error(`  ${line}`) });
      result.environment = { ...result.environment, ...environment() };
      results.push(result);
      const file = path.join(resultsDir, `${benchmark.name}.json`);
      await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
      if (!args.values.json) {
        console.log(`\n${formatResult(result, color)}`);
        console.log(`  (JSON: ${path.relative(process.cwd(), file)})\n`);
      }
    } catch (error) {
      failed++;
      console.error(
        `✖ ${benchmark.name} did not run to the end: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
    }
  }
  if (args.values.json) console.log(JSON.stringify(results, null, 2));
  return failed > 0 ? 1 : 0;
}

let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    console.error(`\n${signal}: stopping the benchmark servers and removing temp files…`);
    void closeAllScopes().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  });
}

main().then(
  (code) => {
    process.exitCode = code;
    // A stray handle (a keep-alive socket, a timer) must not keep a finished run alive.
    setTimeout(() => process.exit(), 2000).unref();
  },
  async (error: unknown) => {
    console.error(error);
    await closeAllScopes();
    process.exit(1);
  },
);
