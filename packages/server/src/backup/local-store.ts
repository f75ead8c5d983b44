import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Config } from "../config.ts";
import { redactConnectionUrl } from "../redact-connection-url.ts";
import { BackupRefusedError } from "./backup-errors.ts";

/** Where the embedded store keeps its parts: what `backup` copies and `restore` writes. */
export interface LocalStore {
  dataDir: string;
  /** The SQLite database file, absolute. */
  databaseFile: string;
  /** The root of the file blob store (binaries, test packages, version files, artifacts, logs), absolute. */
  blobRoot: string;
}

/**
 * The embedded store the configuration names, or a refusal (exit 2) saying what to use instead: a PostgreSQL
 * database is backed up with its own tools (`pg_dump`, point-in-time recovery), and an S3 bucket by the
 * bucket's versioning or replication; copying one while the server writes to the other would not give a
 * consistent pair, so neither half is done here.
 */
export function localStoreOf(config: Config, command: "backup" | "restore"): LocalStore {
  const advice: string[] = [];
  if (!config.databaseUrl.startsWith("sqlite:")) {
    advice.push(
      `the database is PostgreSQL (${redactConnectionUrl(config.databaseUrl)}): back it up with pg_dump (or your PostgreSQL's point-in-time recovery) and restore it with pg_restore`,
    );
  }
  if (!config.storageUrl.startsWith("file:")) {
    advice.push(
      `blobs are in S3 (${redactConnectionUrl(config.storageUrl.split("?")[0] ?? "")}): turn on the bucket's versioning (or replication) and restore objects from it`,
    );
  } else if (advice.length > 0) {
    advice.push(`copy the blob directory ${blobRootOf(config.storageUrl)} after the database dump`);
  }
  if (advice.length > 0) {
    throw new BackupRefusedError(
      `${command} works on the embedded store only (SQLite and blob files in the data dir); ${advice.join("; ")}.`,
      2,
    );
  }
  const file = config.databaseUrl.slice("sqlite:".length);
  if (file === ":memory:") {
    throw new BackupRefusedError(`an in-memory SQLite database cannot be backed up or restored`, 2);
  }
  return {
    dataDir: config.dataDir,
    databaseFile: path.resolve(file),
    blobRoot: blobRootOf(config.storageUrl),
  };
}

/** The directory of a `file:` storage URL, as storage/index.ts reads it. */
function blobRootOf(storageUrl: string): string {
  const dir = storageUrl.startsWith("file://") ? fileURLToPath(storageUrl) : storageUrl.slice("file:".length);
  return path.resolve(dir);
}
