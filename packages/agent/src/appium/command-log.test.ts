import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CommandLog, type CommandLogLine } from "./command-log.ts";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function logFile(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "command-log-"));
  dirs.push(dir);
  return path.join(dir, "commands.jsonl");
}

const line = (n: number): CommandLogLine => ({
  at: new Date(Date.UTC(2026, 10, 29, 6, 0, n)).toISOString(),
  method: "GET",
  path: `/element/${n}/text`,
  status: 200,
  ms: n / 10,
});

const readLines = async (file: string) =>
  (await readFile(file, "utf8").catch(() => ""))
    .split("\n")
    .filter(Boolean)
    .map((text) => JSON.parse(text) as CommandLogLine);

describe("CommandLog", () => {
  it("has every line on disk, in order, once closed; lines after the close are not written", async () => {
    const file = await logFile();
    const log = new CommandLog(file, 60_000);
    for (let n = 0; n < 5; n++) log.append(line(n));
    await log.close();
    log.append(line(99));
    await log.close();
    expect(await readLines(file)).toEqual([0, 1, 2, 3, 4].map(line));
  });

  it("writes what it gathered within its flush interval, while the session goes on", async () => {
    const file = await logFile();
    const log = new CommandLog(file, 20);
    log.append(line(1));
    log.append(line(2));
    await vi.waitFor(async () => expect(await readLines(file)).toEqual([line(1), line(2)]));
    log.append(line(3));
    await vi.waitFor(async () => expect(await readLines(file)).toHaveLength(3));
    await log.close();
    expect(await readLines(file)).toEqual([1, 2, 3].map(line));
  });

  it("writes a long burst without waiting for the interval", async () => {
    const file = await logFile();
    const log = new CommandLog(file, 60_000);
    // About 90 characters a line: 1,000 lines pass the 64 KiB that is written at once.
    for (let n = 0; n < 1000; n++) log.append(line(n % 60));
    await vi.waitFor(async () => expect((await readLines(file)).length).toBeGreaterThan(0));
    await log.close();
    expect(await readLines(file)).toHaveLength(1000);
  });
});
