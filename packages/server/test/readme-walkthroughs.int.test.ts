// The walkthroughs that need no device, in the README and in the guide (docs/*.md), run as a newcomer runs
// them: their shell blocks, in order, in bash, against `testbay-server start` with the embedded default, from a
// directory laid out like the repository root. A page whose commands drift from what the server and CLI do
// fails here.
//
// Which blocks: each fenced block preceded by `<!-- walkthrough: NAME -->` (or `NAME background` for a
// block the page runs in a shell of its own that keeps running, like an agent). The blocks of one NAME
// run in one bash session (`set -eo pipefail`), so variables carry from block to block as in the reader's
// shell; a background block runs in a fresh environment of its own, started where it appears. Files are read
// README.md first, then docs/*.md by name; the blocks of one NAME must all be in one file, so their order is
// the order the reader meets them (a NAME found in two files fails the read).
//
// The text runs unchanged, while the server listens on a free port, not 8080: the blocks take the address from
// credentials.json's base_url as a reader on another TESTBAY_PORT would, so a block that hard-codes
// 127.0.0.1:8080 fails here. This runs in the `sqlite`
// project only: the walkthroughs are about the embedded default (a PostgreSQL store writes no
// credentials.json, which they read).
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServerProcess } from "./server-process.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));

interface Block {
  walkthrough: string;
  /** The page it is in, relative to the repository root (README.md, docs/….md). */
  file: string;
  background: boolean;
  text: string;
  line: number;
}

/** A page's marked shell blocks, in order. */
function walkthroughBlocks(file: string, page: string): Block[] {
  const lines = page.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const marker = /^<!-- walkthrough: ([\w-]+)( background)? -->$/.exec(lines[i] ?? "");
    if (!marker) continue;
    if (lines[i + 1] !== "```sh")
      throw new Error(`${file}:${i + 1}: a walkthrough marker must precede a sh block`);
    const end = lines.indexOf("```", i + 2);
    if (end < 0) throw new Error(`${file}:${i + 2}: the block is not closed`);
    blocks.push({
      walkthrough: marker[1] ?? "",
      file,
      background: marker[2] !== undefined,
      text: lines.slice(i + 2, end).join("\n"),
      line: i + 3,
    });
  }
  return blocks;
}

/** The pages with walkthroughs: README.md, then the guide's pages by name. */
async function walkthroughPages(): Promise<string[]> {
  const guide = (await readdir(path.join(root, "docs"))).filter((name) => name.endsWith(".md")).sort();
  return ["README.md", ...guide.map((name) => `docs/${name}`)];
}

/** Every page's marked blocks; a walkthrough split over two pages would run in no reader's order, so it fails. */
async function allWalkthroughBlocks(): Promise<Block[]> {
  const blocks: Block[] = [];
  for (const file of await walkthroughPages()) {
    const found = walkthroughBlocks(file, await readFile(path.join(root, file), "utf8"));
    for (const block of found) {
      const elsewhere = blocks.find((b) => b.walkthrough === block.walkthrough && b.file !== file);
      if (elsewhere)
        throw new Error(
          `${file}:${block.line}: walkthrough ${block.walkthrough} is in ${elsewhere.file} already: keep one walkthrough in one file`,
        );
    }
    blocks.push(...found);
  }
  return blocks;
}

/** One bash script per walkthrough; background blocks go to files of their own, started in their own group. */
async function scriptFor(name: string, blocks: Block[], dir: string): Promise<string> {
  const parts = ["set -eo pipefail"];
  let background = 0;
  for (const block of blocks.filter((b) => b.walkthrough === name)) {
    const text = block.text;
    if (!block.background) {
      parts.push(`# ${block.file}:${block.line}`, text);
      continue;
    }
    background += 1;
    const file = `${name}-background-${background}.sh`;
    await writeFile(path.join(dir, file), `${text}\n`);
    parts.push(
      `# ${block.file}:${block.line}, in a shell of its own`,
      `setsid env -i PATH="$PATH" HOME="$HOME" NODE_OPTIONS="$NODE_OPTIONS" bash ${file} > ${file}.log 2>&1 &`,
      `echo $! >> background.pids`,
    );
  }
  return `${parts.join("\n")}\n`;
}

/** Runs a walkthrough's script with bash in `dir`; resolves with its exit code and output. */
function runBash(script: string, dir: string, env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn("bash", ["-c", script], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    child.once("close", (code) => resolve({ code, output }));
  });
}

/** Stops every background block's process group (an agent started with npx is several processes). */
async function stopBackground(dir: string): Promise<void> {
  const pids = await readFile(path.join(dir, "background.pids"), "utf8").catch(() => "");
  for (const pid of pids.split("\n").filter(Boolean)) {
    try {
      process.kill(-Number(pid), "SIGTERM");
    } catch {
      // already gone
    }
  }
}

let dir: string;
let server: ServerProcess;
let blocks: Block[];
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  blocks = await allWalkthroughBlocks();
  dir = await mkdtemp(path.join(tmpdir(), "testbay-readme-"));
  // Laid out like the repository root: the walkthroughs' paths (packages/…/fixtures) and `npx testbay` work from it.
  await symlink(path.join(root, "packages"), path.join(dir, "packages"));
  await symlink(path.join(root, "node_modules"), path.join(dir, "node_modules"));
  server = await startServerProcess({ TESTBAY_DATA_DIR: path.join(dir, ".testbay") });
  // The reader's shell: nothing of Testbay's set, the test runner's PATH and Node options (sources, not a
  // build), and a home of its own (the agent keeps its cache under ~/.cache).
  await mkdir(path.join(dir, "home"));
  env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("TESTBAY_"))),
    HOME: path.join(dir, "home"),
  };
}, 120_000);

afterAll(async () => {
  if (dir) await stopBackground(dir);
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the walkthroughs of the README and the guide, run as written", () => {
  it("marks blocks of the device-less walkthroughs, each in its page", () => {
    const pages = Object.fromEntries(blocks.map((b) => [b.walkthrough, b.file]));
    expect(pages).toEqual({
      "run-a-plan": "README.md",
      "sign-in": "docs/dashboard-and-people.md",
      "first-calls": "docs/getting-started.md",
    });
  });

  it("Getting started, First calls: a token, /v1/me, an upload with its HEAD check and a range, a plan triggered", async () => {
    const { code, output } = await runBash(await scriptFor("first-calls", blocks, dir), dir, env);
    expect(code, output).toBe(0);
    expect(output).toMatch(/"role":"ci"/);
    // HEAD before the upload says 404 (upload it), the ranged download is 100 bytes.
    // (curl prints JSON bodies without a newline: the codes follow them on the same line.)
    expect(output).toMatch(/\}404\n/);
    expect(output).toMatch(/\}100\n/);
    expect(output).toMatch(/"version":"1\.2\.3"/);
    expect(output).toMatch(/"failed_executions":\[\]/);
    expect(output).toMatch(/"items":\[\{"id":"ex_/);
  });

  it("Run a test plan: testbay.yaml applied, the inspect plan run by name to passed with a JUnit report; an agent runs the shell plan", async () => {
    const { code, output } = await runBash(await scriptFor("run-a-plan", blocks, dir), dir, env);
    expect(code, output).toBe(0);
    // testbay.yaml applied: the plan created by name, then run by name.
    expect(output).toMatch(/created\s+manifest\s+tp_\w+/);
    expect(output).toMatch(/ex_\w+\s+manifest \(tp_\w+\)\s+passed/);
    const report = await readFile(path.join(dir, "report.xml"), "utf8");
    // One test case per expectation of the plan (min_sdk_at_most, debuggable).
    expect(report.match(/<testcase /g)).toHaveLength(2);
    const run = JSON.parse(await readFile(path.join(dir, "run.json"), "utf8"));
    expect(run.executions[0].status).toBe("passed");
    // The shell plan's log, its JUnit (the Smoke test) and its artifact (the listing of the app's file).
    expect(output).toMatch(/classname="Smoke"/);
    expect(output).toMatch(/\/com\.example\.basic\.apk -> /);
  });

  it("Dashboard and people, People and sign-in: admin@localhost signs in, and the cookie reads runs", async () => {
    const { code, output } = await runBash(await scriptFor("sign-in", blocks, dir), dir, env);
    expect(code, output).toBe(0);
    expect(output).toMatch(/"user":\{"email":"admin@localhost","role":"admin","org":"default"\}/);
    expect(output).toMatch(/"csrf_token":"/);
    expect(output).toMatch(/\{"items":\[/);
  });
});
