import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { type ProcessSpec, runProcess } from "./process-runner.ts";
import { hasEnded } from "./test-context.ts";

type Line = { stream: "stdout" | "stderr"; line: string };

function spec(script: string, overrides: Partial<ProcessSpec> = {}) {
  const lines: Line[] = [];
  const full: ProcessSpec = {
    command: "/bin/sh",
    args: ["-c", script],
    cwd: tmpdir(),
    env: process.env,
    timeoutMs: 60_000,
    signal: new AbortController().signal,
    onLine: (stream, line) => lines.push({ stream, line }),
    ...overrides,
  };
  return { spec: full, lines };
}

/** Resolves with the pid a script printed as "child=PID". */
function childPid(lines: Line[]): number {
  const found = lines.find((l) => l.line.startsWith("child="));
  if (found === undefined) throw new Error("the script printed no child pid");
  return Number(found.line.slice("child=".length));
}

describe("runProcess", () => {
  it("streams stdout and stderr line by line and reports the exit code", async () => {
    const { spec: s, lines } = spec("echo out1; echo err1 >&2; printf 'no newline'; exit 3");
    expect(await runProcess(s)).toEqual({
      exitCode: 3,
      signal: null,
      timedOut: false,
      aborted: false,
      spawnError: null,
    });
    expect(lines.filter((l) => l.stream === "stdout").map((l) => l.line)).toEqual(["out1", "no newline"]);
    expect(lines.filter((l) => l.stream === "stderr").map((l) => l.line)).toEqual(["err1"]);
  });

  it("reports a command that cannot start", async () => {
    const { spec: s } = spec("", { command: "/nonexistent/tool", args: [] });
    const result = await runProcess(s);
    expect(result.exitCode).toBeNull();
    expect(result.spawnError).toMatch(/ENOENT/);
  });

  it("reports arguments the OS cannot take instead of throwing", async () => {
    const { spec: s } = spec("echo a\u0000b");
    expect(await runProcess(s)).toMatchObject({
      exitCode: null,
      spawnError: expect.stringContaining("null bytes"),
    });
  });

  it("does not start when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const { spec: s, lines } = spec("echo started", { signal: controller.signal });
    expect(await runProcess(s)).toMatchObject({ aborted: true, exitCode: null });
    expect(lines).toEqual([]);
  });

  it("on timeout kills the whole process group, grandchildren included", async () => {
    const { spec: s, lines } = spec('sleep 30 & echo "child=$!"; wait', { timeoutMs: 1_000 });
    const result = await runProcess(s);
    expect(result).toMatchObject({ timedOut: true, aborted: false, exitCode: null, signal: "SIGTERM" });
    expect(await hasEnded(childPid(lines))).toBe(true);
  });

  it("on abort kills the whole process group, grandchildren included", async () => {
    const controller = new AbortController();
    const lines: Line[] = [];
    const { spec: s } = spec('sleep 30 & echo "child=$!"; wait', {
      signal: controller.signal,
      onLine: (stream, line) => {
        lines.push({ stream, line });
        if (line.startsWith("child=")) controller.abort();
      },
    });
    const result = await runProcess(s);
    expect(result).toMatchObject({ aborted: true, timedOut: false, exitCode: null });
    expect(await hasEnded(childPid(lines))).toBe(true);
  });

  it("kills with SIGKILL a grandchild that ignores SIGTERM", async () => {
    const controller = new AbortController();
    const lines: Line[] = [];
    const script = `sh -c 'trap "" TERM; echo "child=$$"; sleep 30; sleep 30' & wait`;
    const { spec: s } = spec(script, {
      signal: controller.signal,
      killGraceMs: 200,
      onLine: (stream, line) => {
        lines.push({ stream, line });
        if (line.startsWith("child=")) controller.abort();
      },
    });
    expect(await runProcess(s)).toMatchObject({ aborted: true });
    expect(await hasEnded(childPid(lines))).toBe(true);
  });

  it("stops what the command left running in the background when it exits", async () => {
    const { spec: s, lines } = spec('sleep 30 & echo "child=$!"; exit 0');
    expect(await runProcess(s)).toMatchObject({ exitCode: 0, timedOut: false, aborted: false });
    expect(await hasEnded(childPid(lines))).toBe(true);
  });
});
