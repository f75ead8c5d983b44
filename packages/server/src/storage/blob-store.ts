import type { Readable } from "node:stream";

/** A byte range, both ends inclusive, as in HTTP Range. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Where binaries and artifacts live: local files in the embedded default, S3-compatible storage when scaled
 * out. Keys are made by the server (never from user input). Objects are written whole or not at all: a
 * reader never sees a half-written object.
 */
export interface BlobStore {
  /** Moves a finished local file into the store under `key` (the file is gone afterwards). */
  putFile(key: string, localPath: string): Promise<void>;
  /** Streams an object, or part of it. */
  read(key: string, range?: ByteRange): Promise<Readable>;
  delete(key: string): Promise<void>;
  /** Every key in the store: to sweep objects no database row refers to. */
  keys(): AsyncIterable<string>;
  /** Resolves when the store can be written to; for /readyz. */
  check(): Promise<void>;
  /** Lets go of connections (S3); nothing to do for local files. */
  close?(): Promise<void>;
}

const keyPattern = /^[a-z0-9]+(\/[A-Za-z0-9_-]+)+$/;

/** Keys are server-made; this guards against a bug ever turning user input into one. */
export function assertValidKey(key: string): void {
  if (!keyPattern.test(key)) throw new Error(`invalid blob key ${JSON.stringify(key)}`);
}
