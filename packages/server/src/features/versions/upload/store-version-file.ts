import { rm } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import type { ApiError } from "../../../errors.ts";
import type { ExpectedDigest } from "../../../http/upload/content-digest.ts";
import { receiveVerified, type UploadLimits } from "../../../http/upload/receive-verified.ts";

export interface ReceivedFile {
  /** Where the verified body lies until it is stored (removed afterwards whatever happens). */
  file: string;
  size: number;
  sha256: string;
}

export interface StoreVersionFileOptions<T extends { blobKey: string }> extends UploadLimits {
  stagingDir: string;
  /** Names the staged file; the record's blob key ends with it. */
  blobId: string;
  store: { putFile(key: string, file: string): Promise<void>; delete(key: string): Promise<void> };
  /** Inspects the staged file and describes the record to keep (refusing what is not what the route takes). */
  describe(received: ReceivedFile): Promise<T>;
  /** Writes the record; false when one exists already for that version. */
  insert(record: T): Promise<boolean>;
  /** The 409 when `insert` found one already. */
  exists(): ApiError;
}

/**
 * A version's binary and its test package are kept the same way (versions.service.ts, test-packages.service.ts):
 * the body received and verified into the staging dir, inspected, moved into the store, then recorded, in that
 * order. Until the record is written the file does not exist for anyone, and a failure at any step leaves
 * neither a record nor a stray file.
 */
export async function storeVersionFile<T extends { blobKey: string }>(
  body: Readable,
  digest: ExpectedDigest | undefined,
  options: StoreVersionFileOptions<T>,
): Promise<T> {
  const staged = path.join(options.stagingDir, `${options.blobId}.part`);
  try {
    const received = await receiveVerified(body, staged, options, digest);
    const record = await options.describe({
      file: staged,
      size: received.size,
      sha256: received.sha256.toString("hex"),
    });
    await options.store.putFile(record.blobKey, staged);
    let recorded = false;
    try {
      recorded = await options.insert(record);
    } finally {
      if (!recorded) await options.store.delete(record.blobKey);
    }
    if (!recorded) throw options.exists();
    return record;
  } finally {
    await rm(staged, { force: true });
  }
}
