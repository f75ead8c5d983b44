import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

// Scaled configuration only (Vitest project `scaled`), which has what scripts/cluster.sh needs: PostgreSQL and
// Redis on their usual ports. The script runs on ports, a database and a state dir of its own.

const script = fileURLToPath(new URL("../../../../scripts/cluster.sh", import.meta.url));
const database = "testbay_cluster_script_test";
let state: string | undefined;
let cluster: ChildProcess | undefined;

/** Binds the port and lets it go: true when nothing else holds it. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

/** A free port whose next one is free too (the script's API instances take two in a row). */
async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === "object" && address ? address.port : 0));
      });
    });
    if (port < 65535 && (await portFree(port + 1))) return port;
  }
}

/** Every process under `root`, from /proc (Linux): the parent links as they are now. */
async function descendants(root: number): Promise<number[]> {
  const parents = new Map<number, number>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, "utf8");
      // The command name in parentheses may hold spaces: the fields after its closing one are fixed.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (pid: number) => {
    for (const [child, parent] of parents) {
      if (parent === pid) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(root);
  return found;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

afterAll(async () => {
  // A failed test must not leave a cluster behind: the script's own stop does the work.
  if (cluster && cluster.exitCode === null && cluster.signalCode === null) {
    const exited = new Promise((resolve) => cluster?.once("exit", resolve));
    cluster.kill("SIGTERM");
    await exited;
  }
  await promisify(execFile)("psql", [
    "-h",
    "127.0.0.1",
    "-U",
    "postgres",
    "-d",
    "test",
    "-qc",
    `drop database if exists ${database}`,
  ]);
  if (state) await rm(state, { recursive: true, force: true });
});

describe("scripts/cluster.sh", () => {
  it("on SIGTERM stops every process it started, waits for them and frees their ports", async () => {
    state = await mkdtemp(path.join(tmpdir(), "testbay-cluster-"));
    const apiPort = await freePortPair();
    const s3Port = await freePortPair();
    const ports = [apiPort, apiPort + 1, s3Port];
    cluster = spawn("bash", [script], {
      env: {
        ...process.env,
        CLUSTER_STATE_DIR: state,
        CLUSTER_DATABASE: database,
        CLUSTER_API_PORT: String(apiPort),
        S3_PORT: String(s3Port),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const started = cluster;
    let output = "";
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      started.once("exit", (code, signal) => resolve({ code, signal })),
    );
    const running = new Promise<boolean>((resolve) => {
      const onData = (chunk: Buffer) => {
        output += String(chunk);
        if (output.includes("Ctrl-C stops everything")) resolve(true);
      };
      started.stdout?.on("data", onData);
      started.stderr?.on("data", onData);
      exited.then(() => resolve(false));
    });
    expect(await running, output).toBe(true);

    const pids = await descendants(started.pid as number);
    const commands = await Promise.all(
      pids.map((pid) => readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")),
    );
    const nodes = commands.filter((command) => command.startsWith("node\0"));
    // s3rver, two API instances, two agents.
    expect(nodes, commands.join("\n")).toHaveLength(5);
    for (const port of ports) expect(await portFree(port), `port ${port} in use while running`).toBe(false);

    started.kill("SIGTERM");
    expect(await exited).toEqual({ code: 143, signal: null });
    expect(pids.filter(alive), output).toEqual([]);
    for (const port of ports) expect(await portFree(port), `port ${port} free after the stop`).toBe(true);
  }, 180_000);
});
