import { createReadStream } from "node:fs";
import { stat, unlink } from "node:fs/promises";
import { Readable } from "node:stream";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { redactConnectionUrl } from "../redact-connection-url.ts";
import { assertValidKey, type BlobStore, type ByteRange } from "./blob-store.ts";
import type { S3Location } from "./s3-url.ts";

export interface S3BlobStoreOptions extends S3Location {
  /**
   * Only for tests: fixed credentials. In the server they always come from the AWS SDK's default chain
   * (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, web identity, instance or task role).
   */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Bytes per multipart part; S3's minimum (and the default) is 5 MiB. */
  partSize?: number;
  /** Parts uploaded at once; memory use is up to partSize × queueSize per upload. Default 4. */
  queueSize?: number;
  /** Keys per ListObjectsV2 request; S3's maximum (and the default) is 1000. Smaller only to test paging. */
  listPageSize?: number;
  /** How long check() waits for the bucket to answer before giving up the request. Default 2 s, as /readyz. */
  checkTimeoutMs?: number;
}

/**
 * A read of a key that holds no object. `code` is "ENOENT", as for a missing file in the file store, so
 * callers can treat both stores alike.
 */
export class BlobNotFoundError extends Error {
  readonly code = "ENOENT";
  constructor(readonly key: string) {
    super(`no stored object under ${key}`);
    this.name = "BlobNotFoundError";
  }
}

const minPartSize = 5 * 1024 * 1024;
const maxParts = 10_000;

/**
 * Objects in one bucket of S3 or an S3 look-alike (MinIO, Ceph, R2…); the object key is the blob key.
 * Writes are whole or nothing: a single PUT, or a multipart upload that only becomes visible when completed
 * (and is aborted on failure).
 */
export class S3BlobStore implements BlobStore {
  readonly bucket: string;
  private readonly client: S3Client;
  private readonly partSize: number;
  private readonly queueSize: number;
  private readonly listPageSize: number;
  private readonly checkTimeoutMs: number;
  /** "bucket b at http://…", for messages. */
  private readonly where: string;

  constructor(options: S3BlobStoreOptions) {
    this.bucket = options.bucket;
    this.partSize = Math.max(options.partSize ?? minPartSize, minPartSize);
    this.queueSize = options.queueSize ?? 4;
    this.listPageSize = options.listPageSize ?? 1000;
    this.checkTimeoutMs = options.checkTimeoutMs ?? 2000;
    this.where = `S3 bucket ${options.bucket}${options.endpoint ? ` at ${options.endpoint}` : ""}`;
    this.client = new S3Client({
      ...(options.region ? { region: options.region } : {}),
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
      forcePathStyle: options.forcePathStyle,
      // The SDK's default (checksums on every request, aws-chunked streaming bodies) is not understood by
      // every S3 look-alike: s3rver, for one, stores such streamed bodies corrupted.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
  }

  async putFile(key: string, localPath: string): Promise<void> {
    assertValidKey(key);
    const { size } = await stat(localPath);
    const body = createReadStream(localPath);
    try {
      const upload = new Upload({
        client: this.client,
        params: { Bucket: this.bucket, Key: key, Body: body, ContentType: "application/octet-stream" },
        // A multipart upload has at most 10,000 parts.
        partSize: Math.max(this.partSize, Math.ceil(size / maxParts)),
        queueSize: this.queueSize,
        // A failed multipart upload is aborted, so its parts do not linger (and cost) in the bucket.
        leavePartsOnError: false,
      });
      await upload.done();
    } catch (error) {
      throw this.failure(`could not store ${key} in`, error);
    } finally {
      body.destroy();
    }
    await unlink(localPath);
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    assertValidKey(key);
    let body: unknown;
    let contentRange: string | undefined;
    try {
      const output = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: key,
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
      );
      body = output.Body;
      contentRange = output.ContentRange;
    } catch (error) {
      const missing =
        error instanceof S3ServiceException &&
        error.name !== "NoSuchBucket" &&
        (error.name === "NoSuchKey" || statusOf(error) === 404);
      if (missing) throw new BlobNotFoundError(key);
      throw this.failure(`could not read ${key} from`, error);
    }
    // In Node the SDK hands out the HTTP response itself: a Readable.
    if (!(body instanceof Readable)) throw new Error(`${this.where} answered ${key} without a body stream`);
    if (range && !answersRange(contentRange, range)) {
      // Callers have already promised the client exactly end - start + 1 bytes (Content-Length).
      body.destroy();
      throw new Error(
        `${this.where} answered bytes ${range.start}-${range.end} of ${key} with ${contentRange ? `"${contentRange}"` : "the whole object"}`,
      );
    }
    return body;
  }

  async delete(key: string): Promise<void> {
    assertValidKey(key);
    try {
      // Deleting a key that holds nothing succeeds, as in the file store.
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (error) {
      throw this.failure(`could not delete ${key} from`, error);
    }
  }

  async *keys(): AsyncIterable<string> {
    let continuationToken: string | undefined;
    do {
      let page: Awaited<ReturnType<typeof this.listPage>>;
      try {
        page = await this.listPage(continuationToken);
      } catch (error) {
        throw this.failure("could not list the objects in", error);
      }
      for (const object of page.Contents ?? []) {
        if (object.Key !== undefined) yield object.Key;
      }
      continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (continuationToken !== undefined);
  }

  private listPage(continuationToken: string | undefined) {
    return this.client.send(
      new ListObjectsV2Command({
        Bucket: this.bucket,
        MaxKeys: this.listPageSize,
        ...(continuationToken ? { ContinuationToken: continuationToken } : {}),
      }),
    );
  }

  async check(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }), {
        abortSignal: AbortSignal.timeout(this.checkTimeoutMs),
      });
    } catch (error) {
      const status = error instanceof S3ServiceException ? statusOf(error) : undefined;
      if (status === 404) throw new Error(`${this.where} does not exist`);
      if (status === 403) {
        throw new Error(
          `${this.where} refuses access: check the AWS credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE) and their permissions`,
        );
      }
      if (status === 301) {
        throw new Error(`${this.where} is in another region: set ?region=… in TESTBAY_STORAGE_URL`);
      }
      throw this.failure("cannot reach", error);
    }
  }

  /** Closes the client's connections. The store cannot be used afterwards. */
  async close(): Promise<void> {
    this.client.destroy();
  }

  private failure(what: string, error: unknown): Error {
    const reason = redactConnectionUrl(
      error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    );
    const hint = /region is missing/i.test(reason)
      ? " (set ?region=… in TESTBAY_STORAGE_URL, or AWS_REGION)"
      : /credential/i.test(reason)
        ? " (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)"
        : "";
    // Not the SDK's error as `cause`: it carries the whole HTTP response, too much for a log line.
    const status = error instanceof S3ServiceException ? ` (HTTP ${statusOf(error) ?? "?"})` : "";
    return new Error(`${what} ${this.where}: ${reason}${status}${hint}`);
  }
}

/** Whether a Content-Range (`bytes 0-99/1234`) is the range asked for, or its part up to the object's end. */
function answersRange(contentRange: string | undefined, range: ByteRange): boolean {
  const match = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(contentRange ?? "");
  if (!match) return false;
  const [start, end, size] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const lastByte = Number.isNaN(size) ? range.end : Math.min(range.end, size - 1);
  return start === range.start && end === lastByte;
}

function statusOf(error: S3ServiceException): number | undefined {
  return error.$metadata?.httpStatusCode;
}
