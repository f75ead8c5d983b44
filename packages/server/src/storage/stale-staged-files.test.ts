import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { FastifyBaseLogger } from "fastify";
import pino from "pino";
import { afterEach, beforeEach, expect, it } from "vitest";
import { removeStaleStagedFiles } from "./stale-staged-files.ts";

let dir: string;
const said: string[] = [];
const log = pino({ level: "info" }, { write: (line: string) => said.push(line) }) as FastifyBaseLogger;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "testbay-staging-"));
  said.length = 0;
});
afterEach(() => rm(dir, { recursive: true, force: true }));

async function stagedAgo(name: string, minutes: number, directory = false): Promise<void> {
  const file = path.join(dir, name);
  if (directory) await mkdir(file);
  else await writeFile(file, "bytes");
  const at = new Date(Date.now() - minutes * 60 * 1000);
  await utimes(file, at, at);
}

it("removes what no process has written for ten minutes and keeps what another instance is writing", async () => {
  await stagedAgo("blob_dead-upload.part", 60);
  await stagedAgo("blob_dead-dir", 11, true);
  await stagedAgo("blob_in-flight-upload.part", 9);
  await stagedAgo("blob_chunk-now.part", 0);

  await removeStaleStagedFiles(dir, log, "an upload");

  expect((await readdir(dir)).sort()).toEqual(["blob_chunk-now.part", "blob_in-flight-upload.part"]);
  expect(said.join("")).toContain("removed an upload left over from an earlier run");
  expect(said.join("")).toContain("blob_dead-upload.part");
});

it("makes the directory when it is not there yet", async () => {
  const missing = path.join(dir, "tmp", "logs");
  await removeStaleStagedFiles(missing, log, "a log chunk");
  expect(await readdir(missing)).toEqual([]);
});
