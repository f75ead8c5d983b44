/**
 * Test support: puts the stand-in adb and maestro (test/fixtures/bin) first on PATH for the current test
 * and reads back how they were called.
 */
import { existsSync, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { vi } from "vitest";
import { FAKE_BIN_DIR } from "./test-context.ts";

export interface ToolCall {
  tool: string;
  argv: string[];
  flows?: string[];
}

/** Stubs PATH and the FAKE_* variables until vi.unstubAllEnvs(); returns a reader of the calls. */
export function useFakeTools(logDir: string, scenario: Record<string, string> = {}): () => ToolCall[] {
  const log = join(logDir, "tool-calls.log");
  vi.stubEnv("PATH", `${FAKE_BIN_DIR}${delimiter}${process.env.PATH ?? ""}`);
  vi.stubEnv("FAKE_TOOL_ARGV_LOG", log);
  for (const [name, value] of Object.entries(scenario)) vi.stubEnv(name, value);
  return () =>
    existsSync(log)
      ? readFileSync(log, "utf8")
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line) as ToolCall)
      : [];
}
