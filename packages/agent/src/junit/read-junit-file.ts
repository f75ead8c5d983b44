/** Reads one JUnit report from disk, refusing an oversized file before reading any of it. */
import { readFile, stat } from "node:fs/promises";
import { type JUnitParseResult, MAX_JUNIT_BYTES, oversizeError, parseJUnit } from "./parse-junit.ts";

export async function readJUnitFile(path: string): Promise<JUnitParseResult> {
  try {
    const info = await stat(path);
    if (info.size > MAX_JUNIT_BYTES) return { ok: false, error: oversizeError(info.size) };
    return parseJUnit(await readFile(path, "utf8"));
  } catch (error) {
    return { ok: false, error: `could not read: ${(error as Error).message}` };
  }
}
