// The integration suites start `testbay-server`, `testbay-agent` and `testbay` as child processes, as operators
// and pipelines do (the server's own start, the agents, the CLI in the walkthroughs). Run from the TypeScript sources
// through tsx, each start cost ~4.5 s of CPU (tsx resolving and loading some 600 modules through its loader
// hooks); the compiled dist/ ~1.5 s, but dist/ is only as new as the last build. So, before the suites run,
// this bundles each package's CLI from the sources as they are now (esbuild, about a second each) into
// packages/<name>/.test-bundle/cli.mjs, which the bins load under the "testbay-test-bundle" condition that
// vitest.config.ts gives the processes tests start (packages/*/package.json "imports" → "#cli"). Measured:
// `testbay-server --version` 4.6 s → 1.6 s of CPU on the 2-core CI machine.
import { mkdirSync, readFileSync, renameSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build, type Plugin } from "esbuild";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** The packages with a CLI, and the source file their "#cli" import names under the "source" condition. */
const clis = [
  { name: "server", entry: "src/cli.ts" },
  { name: "agent", entry: "src/cli/main.ts" },
  { name: "client", entry: "src/cli/main.ts" },
] as const;

export const bundleDirName = ".test-bundle";

/**
 * Dependencies stay in node_modules, loaded by Node as an installed server loads them (native addons, CommonJS,
 * files they read beside themselves); only our own packages (@testbay/*, relative and "#" imports) are bundled.
 */
const keepDependenciesExternal: Plugin = {
  name: "keep-dependencies-external",
  setup(bundle) {
    bundle.onResolve({ filter: /^[^./#]/ }, (args) =>
      args.path.startsWith("@testbay/") ? undefined : { path: args.path, external: true },
    );
  },
};

/**
 * Each module's import.meta.url stays the URL of its source file: the code finds files beside it that way
 * (package.json for its version, the dashboard's dist/, fixtures), and one bundle file would move them all.
 */
const keepSourceUrls: Plugin = {
  name: "keep-source-urls",
  setup(bundle) {
    bundle.onLoad({ filter: /\.ts$/ }, (args) => ({
      contents: readFileSync(args.path, "utf8").replaceAll(
        "import.meta.url",
        JSON.stringify(pathToFileURL(args.path).href),
      ),
      loader: "ts",
    }));
  },
};

/**
 * Vitest's global setup for the integration projects: bundles the three CLIs before any suite starts, then
 * gives the processes the tests start (through NODE_OPTIONS, which Vitest's workers and their children
 * inherit) the condition that loads them. A run of the unit project alone starts no CLI and bundles nothing.
 * Each integration project names this setup; the bundling happens once per Vitest process (the promise is kept
 * on globalThis, which every project's setup shares), and each bundle is written beside its place and renamed
 * into it, so a CLI started meanwhile loads a whole bundle, the last run's or this one's, never half of one.
 */
export default async function bundleBins(): Promise<void> {
  const shared = globalThis as { testbayBinsBundled?: Promise<void> };
  shared.testbayBinsBundled ??= bundleAll();
  await shared.testbayBinsBundled;
  const condition = "--conditions=testbay-test-bundle";
  if (!process.env.NODE_OPTIONS?.includes(condition)) {
    process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS, condition].filter(Boolean).join(" ");
  }
}

async function bundleAll(): Promise<void> {
  await Promise.all(
    clis.map(async ({ name, entry }) => {
      const packageDir = path.join(root, "packages", name);
      const outDir = path.join(packageDir, bundleDirName);
      mkdirSync(outDir, { recursive: true });
      const outfile = path.join(outDir, "cli.mjs");
      const partial = `${outfile}.${process.pid}.partial`;
      await build({
        entryPoints: [path.join(packageDir, entry)],
        outfile: partial,
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node20",
        conditions: ["source"],
        plugins: [keepDependenciesExternal, keepSourceUrls],
        logLevel: "warning",
      });
      renameSync(partial, outfile);
    }),
  );
}
