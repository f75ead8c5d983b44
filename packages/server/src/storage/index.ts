import path from "node:path";
import { fileURLToPath } from "node:url";
import type { BlobStore } from "./blob-store.ts";
import { FileBlobStore } from "./file-store.ts";

export type { BlobStore, ByteRange } from "./blob-store.ts";
export { FileBlobStore } from "./file-store.ts";

/** The store a `TESTBAY_STORAGE_URL` names. */
export function openBlobStore(storageUrl: string): BlobStore {
  if (storageUrl.startsWith("file:")) {
    const dir = storageUrl.startsWith("file://")
      ? fileURLToPath(storageUrl)
      : storageUrl.slice("file:".length);
    return new FileBlobStore(path.resolve(dir));
  }
  throw new Error(
    `TESTBAY_STORAGE_URL ${storageUrl.split("?")[0]}: only file: storage is available in this version of the server.`,
  );
}
