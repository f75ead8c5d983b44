/**
 * Test support (not used by the agent itself): a StepContext whose log and test-case reports are
 * collected in arrays, with fresh temporary directories and a placeholder binary.
 */
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type { BinaryMetadata, StepContext, TestCase } from "./step-types.ts";

export const FIXTURES_DIR = fileURLToPath(new URL("../../test/fixtures/", import.meta.url));
/** Where the stateful adb and maestro stand-ins live (see test/stand-ins/README.md). */
export const FAKE_BIN_DIR = fileURLToPath(new URL("../../test/stand-ins/bin/", import.meta.url));

export interface LogLine {
  stream: "stdout" | "stderr" | "agent";
  line: string;
}

export interface TestStepContext extends StepContext {
  logs: LogLine[];
  cases: TestCase[];
  /** The temporary directory holding workDir, artifactsDir and the binary. */
  root: string;
  abort(reason?: unknown): void;
  /** Lines logged to one stream, for assertions. */
  lines(stream: LogLine["stream"]): string[];
  cleanup(): Promise<void>;
}

export const ANDROID_BINARY: BinaryMetadata = {
  format: "apk",
  platform: "android",
  package_name: "com.example.shop",
  version_name: "1.2.3",
  version_code: 123,
  min_sdk: 24,
  target_sdk: 34,
  min_os_version: null,
  abis: ["arm64-v8a", "x86_64"],
  permissions: ["android.permission.INTERNET", "android.permission.CAMERA"],
  debuggable: false,
  display_name: "Shop",
};

export async function makeStepContext(overrides: Partial<StepContext> = {}): Promise<TestStepContext> {
  const root = await mkdtemp(join(tmpdir(), "testbay-step-"));
  const workDir = join(root, "work");
  const artifactsDir = join(root, "artifacts");
  await mkdir(workDir);
  await mkdir(artifactsDir);
  const appFile = join(root, "app.apk");
  await writeFile(appFile, "PK placeholder apk");
  const controller = new AbortController();
  const logs: LogLine[] = [];
  const cases: TestCase[] = [];
  return {
    workDir,
    artifactsDir,
    appPath: async () => appFile,
    binary: ANDROID_BINARY,
    binarySizeBytes: 12_345_678,
    testPackage: null,
    testPackagePath: async () => {
      throw new Error("this test context has no test package");
    },
    packageName: "com.example.shop",
    version: "1.2.3",
    env: {},
    device: null,
    signal: controller.signal,
    timeoutMs: 60_000,
    log: (stream, line) => logs.push({ stream, line }),
    testCase: (testCase) => cases.push(testCase),
    ...overrides,
    logs,
    cases,
    root,
    abort: (reason) => controller.abort(reason),
    lines: (stream) => logs.filter((l) => l.stream === stream).map((l) => l.line),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/** Alive and not a zombie: an orphan killed with its group may wait a moment for init to reap it. */
export function isProcessRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return true;
  }
}

/**
 * Whether `pid` has ended (or become a zombie) within `withinMs`. A killed process closes its pipes a
 * moment before the kernel marks it dead, and it is not our child, so there is no event to await: the
 * check is repeated a few times instead of asserting on the exact instant the runner resolved.
 */
export async function hasEnded(pid: number, withinMs = 2_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (isProcessRunning(pid)) {
    if (Date.now() > deadline) return false;
    await delay(10);
  }
  return true;
}
