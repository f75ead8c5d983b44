// The CLI as a pipeline of another repository gets it (CLIENT.md "Getting it", API.md §11): downloaded from a
// real server, installed with npm into a directory outside this repository, or run as the one bundled file from
// a directory with no node_modules anywhere above it; then the pipeline's three calls against that server. And the
// CLI and the agent as docs/ci.md and docs/devices-and-agents.md install them on a machine: `npm install -g` from the
// server's URL.
// Nothing here may see this repository's sources: the children run with plain node, without the "source"
// condition the test runner sets.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { IssuedCredentials } from "../../server/src/features/clients/index.ts";
import { startTestServer, type TestServer } from "../../server/test/harness.ts";
import { ensureBuilt, repoRoot } from "./built-downloads.ts";

const apk = fileURLToPath(new URL("../../server/test/fixtures/binaries/app-basic.apk", import.meta.url));
const serverVersion = (
  JSON.parse(await readFile(path.join(repoRoot, "packages/server/package.json"), "utf8")) as {
    version: string;
  }
).version;
const app = "com.example.basic";

let server: TestServer;
let dir: string;
let ci: IssuedCredentials;
let planId: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a machine that never saw this repository: no TESTBAY_*, npm_* or NODE_OPTIONS of ours. */
function outsideEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const kept = Object.entries(process.env).filter(
    ([name]) => !name.startsWith("TESTBAY_") && !name.startsWith("npm_") && name !== "NODE_OPTIONS",
  );
  return { ...Object.fromEntries(kept), ...extra };
}

async function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout, stderr };
}

async function download(file: string, into: string): Promise<string> {
  const response = await fetch(`${server.origin}/downloads/${file}`);
  expect(response.status, `GET /downloads/${file}`).toBe(200);
  const target = path.join(into, file);
  await writeFile(target, Buffer.from(await response.arrayBuffer()));
  return target;
}

/** A new directory holding only an empty project, with the tarball downloaded into it and installed. */
async function installTarball(file: string): Promise<string> {
  const project = path.join(dir, file.replace(/\.tgz$/, ""));
  await mkdir(project);
  await writeFile(path.join(project, "package.json"), '{ "name": "a-pipeline", "private": true }\n');
  const tarball = await download(file, project);
  const install = await run(
    "npm",
    ["install", tarball, "--no-audit", "--no-fund", "--prefer-offline"],
    project,
    outsideEnv(),
  );
  expect(install.code, install.stderr).toBe(0);
  return project;
}

/**
 * `npm install -g --prefix <new dir> <the server's URL>`, as docs/ci.md and docs/devices-and-agents.md install the CLI
 * and the agent:
 * nothing is hoisted above a global package, so its dependencies land in its own node_modules (issue 25: there the
 * agent's were left empty, while a local install worked). No --prefer-offline: npm keeps a remote tarball by its
 * URL, and the test server's port may be one an older build was fetched from; without it npm asks the server
 * again (its ETag), as an operator's npm does. Returns the prefix.
 */
async function installGlobally(file: string): Promise<string> {
  const prefix = path.join(dir, `global-${file.replace(/\.tgz$/, "")}`);
  const install = await run(
    "npm",
    ["install", "-g", "--prefix", prefix, `${server.origin}/downloads/${file}`, "--no-audit", "--no-fund"],
    dir,
    outsideEnv(),
  );
  expect(install.code, install.stderr).toBe(0);
  return prefix;
}

/** Package folders under `modules` (scoped ones included) that hold no package.json: what npm left unfilled. */
async function unfilledPackages(modules: string): Promise<string[]> {
  const unfilled: string[] = [];
  for (const name of await readdir(modules)) {
    if (name.startsWith(".")) continue;
    const names = name.startsWith("@")
      ? (await readdir(path.join(modules, name))).map((scoped) => `${name}/${scoped}`)
      : [name];
    for (const packageName of names) {
      if (!existsSync(path.join(modules, packageName, "package.json"))) unfilled.push(packageName);
    }
  }
  return unfilled;
}

const cliEnv = (extra: Record<string, string> = {}) =>
  outsideEnv({
    TESTBAY_URL: server.baseUrl,
    TESTBAY_CLIENT_ID: ci.client_id,
    TESTBAY_CLIENT_SECRET: ci.client_secret,
    CI: "true",
    ...extra,
  });

beforeAll(async () => {
  await ensureBuilt();
  dir = await realpath(await mkdtemp(path.join(tmpdir(), "testbay-install-")));
  server = await startTestServer();
  ci = await server.createClient("acme", "ci");
  const headers = { "x-api-key": await server.token(ci), "content-type": "application/json" };
  const created = await fetch(`${server.baseUrl}/apps`, {
    method: "POST",
    headers,
    body: JSON.stringify({ package_name: app, platform: "android" }),
  });
  expect(created.status).toBe(201);
  const plan = await fetch(`${server.baseUrl}/testplans`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      name: "installed CLI",
      package_name: app,
      steps: [{ type: "inspect", expect: { debuggable: false } }],
    }),
  });
  expect(plan.status).toBe(201);
  planId = ((await plan.json()) as { id: string }).id;
}, 600_000);

afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("installed from the server's testbay-cli.tgz with npm, outside the repository", () => {
  it("installs with no package of ours from a registry, and runs token, upload and trigger", async () => {
    expect(path.relative(repoRoot, dir).startsWith("..")).toBe(true);
    const project = await installTarball("testbay-cli.tgz");
    const modules = path.join(project, "node_modules");
    expect(await readdir(path.join(modules, "@testbay"))).toEqual(["client"]);
    const installed = JSON.parse(await readFile(path.join(modules, "@testbay/client/package.json"), "utf8"));
    expect(installed.version).toBe(serverVersion);
    // Copied in, not linked back to this repository, and compiled: JavaScript with declarations, no TypeScript.
    expect(await realpath(path.join(modules, "@testbay/client"))).toBe(path.join(modules, "@testbay/client"));
    expect(existsSync(path.join(modules, "@testbay/client/dist/index.d.ts"))).toBe(true);
    expect(existsSync(path.join(modules, "@testbay/client/src"))).toBe(false);

    const testbay = path.join(modules, ".bin", "testbay");
    const token = await run(testbay, ["token"], project, cliEnv());
    expect(token.code, token.stderr).toBe(0);
    const accessToken = token.stdout.trim();
    expect(accessToken).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);

    const upload = await run(
      testbay,
      ["upload", "--app", app, "--version", "1.2.3", "--file", apk],
      project,
      cliEnv({ TESTBAY_TOKEN: accessToken }),
    );
    expect(upload.code, upload.stderr).toBe(0);
    const head = await fetch(`${server.baseUrl}/apps/${app}/versions/1.2.3`, {
      method: "HEAD",
      headers: { "x-api-key": accessToken },
    });
    expect(head.status).toBe(200);

    const trigger = await run(
      testbay,
      ["trigger", "--app", app, "--version", "1.2.3", "--plan", planId],
      project,
      cliEnv({ TESTBAY_TOKEN: accessToken }),
    );
    expect(trigger.code, trigger.stderr).toBe(0);
    const executions = await fetch(`${server.baseUrl}/executions`, { headers: { "x-api-key": accessToken } });
    const listed = (await executions.json()) as { items: Array<{ id: string; test_plan_id: string }> };
    const started = listed.items.filter((execution) => execution.test_plan_id === planId);
    expect(started).toHaveLength(1);
    expect(trigger.stdout).toContain(started[0]?.id);

    // The SDK from plain Node, as a pipeline's own script would import it.
    const sdk = await run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        'import { Testbay } from "@testbay/client"; console.log(typeof Testbay);',
      ],
      project,
      outsideEnv(),
    );
    expect(sdk.stdout.trim(), sdk.stderr).toBe("function");
  });
});

describe("installed from the server's testbay-agent.tgz with npm, outside the repository", () => {
  it("carries the client inside it and starts", async () => {
    const project = await installTarball("testbay-agent.tgz");
    const modules = path.join(project, "node_modules");
    expect(await readdir(path.join(modules, "@testbay"))).toEqual(["agent"]);
    const agentPackage = JSON.parse(
      await readFile(path.join(modules, "@testbay/agent/package.json"), "utf8"),
    );
    expect(agentPackage.version).toBe(serverVersion);
    const bundledClient = path.join(modules, "@testbay/agent/node_modules/@testbay/client/package.json");
    expect(JSON.parse(await readFile(bundledClient, "utf8")).version).toBe(serverVersion);
    const help = await run(path.join(modules, ".bin", "testbay-agent"), ["--help"], project, outsideEnv());
    expect(help.code, help.stderr).toBe(0);
    expect(`${help.stdout}${help.stderr}`).toContain("Usage: testbay-agent");
  });
});

describe("installed globally from the server's URL, as the guide says", () => {
  it("testbay-cli.tgz: testbay --version answers the server's version", async () => {
    const prefix = await installGlobally("testbay-cli.tgz");
    const version = await run(path.join(prefix, "bin", "testbay"), ["--version"], dir, outsideEnv());
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(serverVersion);
  });

  it("testbay-agent.tgz: every dependency unpacked, testbay-agent --version and --help answer", async () => {
    const prefix = await installGlobally("testbay-agent.tgz");
    const agentModules = path.join(prefix, "lib", "node_modules", "@testbay", "agent", "node_modules");
    expect(await unfilledPackages(agentModules)).toEqual([]);
    expect(await readdir(path.join(agentModules, "@testbay"))).toEqual(["client"]);
    const bundledClient = path.join(agentModules, "@testbay", "client", "package.json");
    expect(JSON.parse(await readFile(bundledClient, "utf8")).version).toBe(serverVersion);

    const testbayAgent = path.join(prefix, "bin", "testbay-agent");
    const version = await run(testbayAgent, ["--version"], dir, outsideEnv());
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout).toBe(`${serverVersion}\n`);
    const help = await run(testbayAgent, ["--help"], dir, outsideEnv());
    expect(help.code, help.stderr).toBe(0);
    expect(`${help.stdout}${help.stderr}`).toContain("Usage: testbay-agent");
  });
});

describe("the bundled testbay.mjs, from a directory with no node_modules", () => {
  it("asks the server for a token with nothing but Node", async () => {
    const bare = path.join(dir, "bare");
    await mkdir(bare);
    for (let up = bare; ; up = path.dirname(up)) {
      expect(existsSync(path.join(up, "node_modules")), `${up}/node_modules`).toBe(false);
      if (path.dirname(up) === up) break;
    }
    const file = await download("testbay.mjs", bare);
    const token = await run(process.execPath, [file, "token"], bare, cliEnv());
    expect(token.code, token.stderr).toBe(0);
    expect(token.stdout.trim()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  });
});
