import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { privateFileMode } from "../fs-permissions.ts";

/** One file of a backup: its path inside the backup directory (always `/`-separated), size and SHA-256 (hex). */
export interface ManifestFile {
  path: string;
  size: number;
  sha256: string;
}

/** `manifest.json` (API.md §15): written last, so a backup without one did not finish. */
export interface Manifest {
  /** The newest migration applied to the database copied: what a restoring server must know. */
  schema_version: string;
  created_at: string;
  files: ManifestFile[];
}

export const manifestName = "manifest.json";
/** The database's place in a backup; blobs go under `blobs/` by key, the data dir's small files by name. */
export const databaseName = "testbay.db";
export const blobsPrefix = "blobs/";
/**
 * Small files of the data dir that belong to its store: the first start's credentials, and the local agent's
 * clients (features/agent/local-agent.ts), whose IDs and secrets match the database's clients.
 */
export const dataDirFiles = ["credentials.json", "local-agent.json"] as const;

/** The SHA-256 and size of a file, read as a stream. */
export async function hashFile(file: string): Promise<{ size: number; sha256: string }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { size, sha256: hash.digest("hex") };
}

/**
 * Copies `from` to `to` (a new file, 0600) as a stream, hashing what passes: blobs can be hundreds of MiB,
 * so nothing is held whole. `to` must not exist (`wx`): neither command ever overwrites a file.
 */
export async function copyHashing(from: string, to: string): Promise<{ size: number; sha256: string }> {
  const hash = createHash("sha256");
  let size = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  await pipeline(createReadStream(from), tap, createWriteStream(to, { flags: "wx", mode: privateFileMode }));
  return { size, sha256: hash.digest("hex") };
}

/** The manifest's fields checked for shape; throws a message naming the first wrong one. */
export function parseManifest(text: string): Manifest {
  const value: unknown = JSON.parse(text);
  const record = value as Record<string, unknown>;
  if (typeof value !== "object" || value === null) throw new Error("it is not a JSON object");
  if (typeof record.schema_version !== "string") throw new Error("schema_version is not a string");
  if (typeof record.created_at !== "string") throw new Error("created_at is not a string");
  if (!Array.isArray(record.files)) throw new Error("files is not an array");
  for (const [index, file] of record.files.entries()) {
    const entry = file as Record<string, unknown>;
    if (
      typeof entry?.path !== "string" ||
      typeof entry.size !== "number" ||
      !Number.isSafeInteger(entry.size) ||
      entry.size < 0 ||
      typeof entry.sha256 !== "string" ||
      !/^[0-9a-f]{64}$/.test(entry.sha256)
    ) {
      throw new Error(`files[${index}] is not {path, size, sha256}`);
    }
  }
  return value as Manifest;
}
