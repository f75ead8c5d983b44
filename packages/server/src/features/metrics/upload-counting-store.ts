import { stat } from "node:fs/promises";
import type { BlobStore, ByteRange } from "../../storage/index.ts";
import type { Meters } from "./meters.ts";

/**
 * The blob store the versions feature stores uploads through, counting what it stores into
 * `testbay_upload_bytes_total` (API.md §15). Every upload (binary, test package, version file) ends in one
 * putFile of the verified body (features/versions/upload/store-version-file.ts), so counting there counts
 * each upload once, by its size on disk, without a hook in each upload route.
 */
export function countingUploads(store: BlobStore, meters: Pick<Meters, "uploaded">): BlobStore {
  return {
    async putFile(key: string, localPath: string) {
      // Read before the move: the file is gone afterwards.
      const { size } = await stat(localPath);
      await store.putFile(key, localPath);
      meters.uploaded(size);
    },
    read: (key: string, range?: ByteRange) => store.read(key, range),
    delete: (key: string) => store.delete(key),
    keys: () => store.keys(),
    check: () => store.check(),
  };
}
