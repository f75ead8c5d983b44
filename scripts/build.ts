// The build behind `npm run build` (and the root `prepare`, so `npm install` / `npm ci` leave compiled packages):
//   1. tsc -b: every package to dist/ with declarations (client ← agent ← server);
//   2. the CLI as one file, packages/client/dist/testbay.mjs: `node testbay.mjs …` needs Node 20 and nothing else;
//   3. testbay-cli.tgz and testbay-agent.tgz, npm-installable tarballs of the compiled client and agent, stamped
//      with the server's version; the agent's carries the client inside it, so installing either fetches no
//      package of ours from a registry.
//   4. testbay.schema.json, testbay.yaml's JSON Schema (written by `npm run openapi`), copied as it is.
// The four files land in packages/server/dist/downloads/, which the server serves under /downloads/ (API.md §11).
//   5. the dashboard (packages/web) with Vite to packages/web/dist/, which the server serves at / (features/web).
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { build as viteBuild } from "vite";

const root = fileURLToPath(new URL("..", import.meta.url));
const packagesDir = path.join(root, "packages");
export const downloadsDir = path.join(packagesDir, "server", "dist", "downloads");

interface PackageJson {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  bundleDependencies?: string[];
  exports?: Record<string, Record<string, string>>;
  imports?: Record<string, Record<string, string>>;
  [key: string]: unknown;
}

function readPackage(name: string): PackageJson {
  return JSON.parse(readFileSync(path.join(packagesDir, name, "package.json"), "utf8")) as PackageJson;
}

function log(message: string): void {
  process.stderr.write(`build: ${message}\n`);
}

function compile(): void {
  log("tsc -b tsconfig.build.json");
  execFileSync(
    process.execPath,
    [createRequire(import.meta.url).resolve("typescript/bin/tsc"), "-b", "tsconfig.build.json"],
    {
      cwd: root,
      stdio: "inherit",
    },
  );
}

async function bundleCli(): Promise<string> {
  const outfile = path.join(packagesDir, "client", "dist", "testbay.mjs");
  log(`esbuild → ${path.relative(root, outfile)}`);
  await build({
    stdin: {
      contents:
        'import { runFromProcess } from "./src/cli/main.ts";\nprocess.exitCode = await runFromProcess();\n',
      resolveDir: path.join(packagesDir, "client"),
      sourcefile: "testbay-entry.ts",
      loader: "ts",
    },
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // Some dependencies are CommonJS and call require() for Node's built-ins: an ES module has no require of its own.
    banner: {
      js: '#!/usr/bin/env node\nimport { createRequire as __testbayCreateRequire } from "node:module";\nconst require = __testbayCreateRequire(import.meta.url);',
    },
    legalComments: "inline",
    logLevel: "warning",
    // The one file has no package.json beside it to read its version from (src/cli/version.ts).
    define: { TESTBAY_CLI_VERSION: JSON.stringify(readVersion()) },
  });
  return outfile;
}

/** What an installed package needs of a workspace package.json: compiled entry points only, the server's version. */
function publishable(pkg: PackageJson, version: string): PackageJson {
  const { scripts: _scripts, devDependencies: _dev, private: _private, ...rest } = pkg;
  const withoutSource = (map: PackageJson["exports"]) =>
    map &&
    Object.fromEntries(
      Object.entries(map).map(([key, conditions]) => {
        const { source: _source, "testbay-test-bundle": _testBundle, ...compiled } = conditions;
        return [key, compiled];
      }),
    );
  return { ...rest, version, exports: withoutSource(pkg.exports), imports: withoutSource(pkg.imports) };
}

function npmPack(dir: string, into: string): string {
  const out = execFileSync("npm", ["pack", "--json", "--pack-destination", into], {
    cwd: dir,
    encoding: "utf8",
    // npm's own variables, set when this runs as a lifecycle script, would point the nested npm at the root.
    env: Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("npm_"))),
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [packed] = JSON.parse(out) as Array<{ filename: string }>;
  if (!packed) throw new Error(`npm pack in ${dir} reported no file`);
  return path.join(into, packed.filename);
}

/** Copies a package's published files (package.json, README, bin/, dist/ less the bundle) into `into`. */
function stage(name: string, pkg: PackageJson, into: string): void {
  mkdirSync(into, { recursive: true });
  const from = path.join(packagesDir, name);
  cpSync(path.join(from, "bin"), path.join(into, "bin"), { recursive: true });
  cpSync(path.join(from, "dist"), path.join(into, "dist"), {
    recursive: true,
    filter: (source) => !source.endsWith(".tsbuildinfo") && !source.endsWith("testbay.mjs"),
  });
  for (const file of ["README.md"]) {
    try {
      cpSync(path.join(from, file), path.join(into, file));
    } catch {
      // not every package has one
    }
  }
  writeFileSync(path.join(into, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
}

function packTarballs(version: string): void {
  const work = mkdtempSync(path.join(os.tmpdir(), "testbay-pack-"));
  try {
    const client = publishable(readPackage("client"), version);
    const clientDir = path.join(work, "client");
    stage("client", client, clientDir);
    renameSync(npmPack(clientDir, downloadsDir), path.join(downloadsDir, "testbay-cli.tgz"));
    log("packed testbay-cli.tgz");

    // The agent carries the client (same files as testbay-cli.tgz) as a bundled dependency, and names the
    // client's own dependencies as its own so npm installs them beside it, where the client's imports find them
    // (Node looks in every node_modules above the importing file).
    const agentPkg = readPackage("agent");
    const agent = publishable(agentPkg, version);
    agent.dependencies = { ...client.dependencies, ...agentPkg.dependencies, [client.name]: version };
    agent.bundleDependencies = [client.name];
    const agentDir = path.join(work, "agent");
    stage("agent", agent, agentDir);
    const bundledClientDir = path.join(agentDir, "node_modules", ...client.name.split("/"));
    cpSync(clientDir, bundledClientDir, { recursive: true });
    // The bundled client's package.json names no dependencies. npm counts a package that a bundled one depends
    // on, placed in the bundling package's node_modules, as part of the bundle (@npmcli/arborist, Node#getBundler:
    // "deps that are deduped up to the bundling level are bundled"), so it expects it inside the tarball and never
    // fetches it. `npm install -g` places every dependency there (nothing is hoisted above a global package), and
    // left commander, ajv, yaml and cli-progress as empty folders: the agent could not start (issue 25). A local
    // install hoists them above the agent, out of the bundle, which is why it worked.
    const { dependencies: _providedByTheAgent, ...bundledClient } = client;
    writeFileSync(path.join(bundledClientDir, "package.json"), `${JSON.stringify(bundledClient, null, 2)}\n`);
    renameSync(npmPack(agentDir, downloadsDir), path.join(downloadsDir, "testbay-agent.tgz"));
    log("packed testbay-agent.tgz");
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function buildDashboard(): Promise<void> {
  const webDir = path.join(packagesDir, "web");
  log(`vite build → ${path.relative(root, path.join(webDir, "dist"))}`);
  // vite.config.ts beside index.html says the rest; warnings and errors only, like esbuild above.
  await viteBuild({ root: webDir, logLevel: "warn" });
}

export async function buildAll(): Promise<void> {
  compile();
  await buildDashboard();
  const bundle = await bundleCli();
  mkdirSync(downloadsDir, { recursive: true });
  cpSync(bundle, path.join(downloadsDir, "testbay.mjs"));
  cpSync(
    path.join(packagesDir, "client", "src", "plans", "testbay-yaml.schema.json"),
    path.join(downloadsDir, "testbay.schema.json"),
  );
  packTarballs(readPackage("server").version);
  log(`downloads ready in ${path.relative(root, downloadsDir)}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildAll();
}

/** The server's version, which every download carries. */
function readVersion(): string {
  const pkg = JSON.parse(readFileSync(path.join(packagesDir, "server", "package.json"), "utf8")) as {
    version: string;
  };
  return pkg.version;
}
