import path from "node:path";
import { fileURLToPath } from "node:url";
import { redactConnectionUrl } from "../redact-connection-url.ts";
import type { BlobStore } from "./blob-store.ts";
import { FileBlobStore } from "./file-store.ts";
import { parseS3Url } from "./s3-url.ts";

export type { BlobStore, ByteRange } from "./blob-store.ts";
export { FileBlobStore } from "./file-store.ts";
// Types only: a value export from s3-store.ts would load the AWS SDK in every server (see openBlobStore).
export type { BlobNotFoundError, S3BlobStore } from "./s3-store.ts";

/**
 * The store a `TESTBAY_STORAGE_URL` names: `file:<dir>` (or `file:///dir`) for local files, `s3://bucket?…`
 * for S3-compatible storage (credentials from the AWS SDK's default chain, never from the URL).
 *
 * The S3 store (and the AWS SDK behind it) is loaded only for an s3:// URL: the SDK's modules and their source
 * text add ~4 MB to a server's live heap, and every full GC marks that heap again. An upload after the server
 * sat idle can run dozens of full GCs (bench/README.md, "upload"), so a smaller heap makes each one cheaper.
 */
export async function openBlobStore(storageUrl: string): Promise<BlobStore> {
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
    const { S3BlobStore } = await import("./s3-store.ts");
    return new S3BlobStore(location);
  }
  throw new Error(
    `TESTBAY_STORAGE_URL ${redactConnectionUrl(storageUrl.split("?")[0] ?? "")}: must be file:<directory> or s3://bucket?endpoint=…`,
  );
}
