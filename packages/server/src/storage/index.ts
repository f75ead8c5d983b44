import path from "node:path";
import { fileURLToPath } from "node:url";
import { redactConnectionUrl } from "../redact-connection-url.ts";
import type { BlobStore } from "./blob-store.ts";
import { FileBlobStore } from "./file-store.ts";
import { S3BlobStore } from "./s3-store.ts";
import { parseS3Url } from "./s3-url.ts";

export type { BlobStore, ByteRange } from "./blob-store.ts";
export { FileBlobStore } from "./file-store.ts";
export { BlobNotFoundError, S3BlobStore } from "./s3-store.ts";

/**
 * The store a `TESTBAY_STORAGE_URL` names: `file:<dir>` (or `file:///dir`) for local files, `s3://bucket?…`
 * for S3-compatible storage (credentials from the AWS SDK's default chain, never from the URL).
 */
export function openBlobStore(storageUrl: string): BlobStore {
  if (storageUrl.startsWith("file:")) {
    const dir = storageUrl.startsWith("file://")
      ? fileURLToPath(storageUrl)
      : storageUrl.slice("file:".length);
    return new FileBlobStore(path.resolve(dir));
  }
  if (/^s3:\/\//i.test(storageUrl)) {
    let location: ReturnType<typeof parseS3Url>;
    try {
      location = parseS3Url(storageUrl);
    } catch (error) {
      throw new Error(
        `TESTBAY_STORAGE_URL ${(error as Error).message}; got ${redactConnectionUrl(storageUrl)}`,
      );
    }
    return new S3BlobStore(location);
  }
  throw new Error(
    `TESTBAY_STORAGE_URL ${redactConnectionUrl(storageUrl.split("?")[0] ?? "")}: must be file:<directory> or s3://bucket?endpoint=…`,
  );
}
