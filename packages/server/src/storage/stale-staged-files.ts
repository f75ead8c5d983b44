import { mkdir, readdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { FastifyBaseLogger } from "fastify";
import { privateDirMode } from "../fs-permissions.ts";

/**
 * How long a staged file must have gone unwritten before a starting server takes it for a dead process's. An
 * upload being received writes its file at least every body idle timeout, and a log chunk lives a few seconds;
 * ten minutes is far past both. (The same grace as orphaned-blobs.ts gives unrecorded blobs.)
 */
const staleAfterMs = 10 * 60 * 1000;

/**
 * Start-up housekeeping of a staging directory (`<data dir>/tmp/…`): removes what a server that died while
 * writing left there, and only that. Instances of a scaled set may share the data dir, so a file written
 * recently can be another live instance's upload or log chunk in flight: removing every file at start lost a
 * run's last log lines when the other instance restarted (rolling-restart.scaled.test.ts). The age is the file's
 * modification time against the system's clock, which wrote it: not the server's Clock, which tests move.
 */
export async function removeStaleStagedFiles(
  dir: string,
  log: FastifyBaseLogger,
  what: string,
): Promise<void> {
  await mkdir(dir, { recursive: true, mode: privateDirMode });
  const now = Date.now();
  for (const name of await readdir(dir)) {
    const file = path.join(dir, name);
    let modifiedAt: number;
    try {
      modifiedAt = (await stat(file)).mtimeMs;
    } catch {
      continue; // gone meanwhile: its writer finished with it
    }
    if (now - modifiedAt < staleAfterMs) continue;
    await rm(file, { force: true, recursive: true });
    log.info({ file: name }, `removed ${what} left over from an earlier run`);
  }
}
