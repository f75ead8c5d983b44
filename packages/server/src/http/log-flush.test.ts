// The server's logs are buffered (http/logging.ts): whatever way the process ends, what was logged before
// reaches stdout. Each case spawns a real process (log-flush.fixture.ts) and reads its stdout.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const fixture = fileURLToPath(new URL("./log-flush.fixture.ts", import.meta.url));
const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "testbay-log-flush-"));
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** Runs the fixture to its end (bounded), and returns its exit code and its stdout's lines, parsed. */
async function runToEnd(ending: string) {
  const dataDir = await mkdtemp(path.join(root, `${ending}-`));
  const child = spawn(process.execPath, ["--import", "tsx", fixture, ending, dataDir], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const killer = setTimeout(() => child.kill("SIGKILL"), 50_000);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(killer);
  const lines = stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { code, lines, stderr };
}

describe("buffered logs reach stdout however the server ends", () => {
  it("on an uncaught exception: the request's line, then the crash with its stack; exit code 1", async () => {
    const { code, lines, stderr } = await runToEnd("throw");
    expect(code, stderr).toBe(1);
    const request = lines.findIndex((line) => line.request_id === "before-the-end");
    expect(lines[request]).toMatchObject({ msg: "request completed", url: "/healthz", status: 200 });
    const crash = lines.findIndex((line) => line.level === 60);
    expect(crash).toBeGreaterThan(request);
    expect(lines[crash]).toMatchObject({ origin: "uncaughtException" });
    expect((lines[crash]?.err as { stack?: string } | undefined)?.stack).toContain("crashing on purpose");
  });

  it("on an unhandled rejection, the same", async () => {
    const { code, lines, stderr } = await runToEnd("reject");
    expect(code, stderr).toBe(1);
    expect(lines).toContainEqual(expect.objectContaining({ request_id: "before-the-end", status: 200 }));
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 60, origin: "unhandledRejection", err: expect.anything() }),
    );
  });

  it("on SIGTERM: the request's line and the shutdown; exit code 0", async () => {
    const { code, lines, stderr } = await runToEnd("sigterm");
    expect(code, stderr).toBe(0);
    expect(lines).toContainEqual(expect.objectContaining({ request_id: "before-the-end", status: 200 }));
    expect(lines).toContainEqual(expect.objectContaining({ msg: "shutting down", signal: "SIGTERM" }));
  });
});
