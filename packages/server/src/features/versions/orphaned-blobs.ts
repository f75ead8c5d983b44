import type { FastifyBaseLogger } from "fastify";
import type { Clock } from "../../clock.ts";
import { timeOfId } from "../../ids.ts";
import type { BlobStore } from "../../storage/index.ts";

/** One kind of blob the versions feature stores under its own key prefix, and how to tell one still recorded. */
export interface BlobOwner {
  /** The key prefix of its blobs ("versions/", "testpackages/", "versionfiles/"). */
  prefix: string;
  /** What a blob of it is, for the log: "binary", "test package", "version file". */
  what: string;
  isReferenced(key: string): Promise<boolean>;
}

/** Blobs younger than this are never swept: their upload may still be about to record them. */
const sweepGraceMs = 10 * 60 * 1000;

/**
 * Start-up housekeeping after a crash: removes the blobs no record refers to (an upload that died between
 * storing and recording), for every owner in one listing of the store (on S3 a listing is paged requests, so
 * the versions, test packages and version files share it rather than list the bucket each).
 */
export async function sweepOrphanedBlobs(
  store: BlobStore,
  clock: Clock,
  owners: readonly BlobOwner[],
  log: FastifyBaseLogger,
): Promise<void> {
  for await (const key of store.keys()) {
    const owner = owners.find((o) => key.startsWith(o.prefix));
    if (!owner) continue;
    if (clock.now() - timeOfId(key.slice(key.lastIndexOf("/") + 1)) < sweepGraceMs) continue;
    if (await owner.isReferenced(key)) continue;
    try {
      await store.delete(key);
      log.info({ key }, `removed a stored ${owner.what} no record refers to`);
    } catch (error) {
      // Something this server did not write (a foreign object in a shared bucket): leave it, go on.
      log.warn({ key, err: error }, `could not remove an object no ${owner.what} refers to`);
    }
  }
}
