import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

/** The little of s3rver (a CommonJS package without type declarations) that tests use. */
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverClass = new (options: {
  address: string;
  port: number;
  directory: string;
  silent: boolean;
  vhostBuckets: boolean;
  configureBuckets: { name: string }[];
}) => S3rverInstance;

const require = createRequire(import.meta.url);
const S3rver = require("s3rver") as S3rverClass;

/**
 * s3rver encrypts its ListObjectsV2 continuation tokens with DES, which OpenSSL 3 (Node ≥ 17) only has with
 * --openssl-legacy-provider: every truncated listing is a 500. Where DES is missing, AES-128-CBC (key and
 * IV doubled to 16 bytes) stands in for it, for the tokens only: nothing else in a test process uses DES.
 */
function letS3rverPage(): void {
  const crypto = require("node:crypto") as typeof import("node:crypto");
  try {
    crypto.createCipheriv("des", Buffer.alloc(8), Buffer.alloc(8));
    return;
  } catch {
    // DES is unavailable: shim it below.
  }
  const { createCipheriv, createDecipheriv } = crypto;
  const doubled = (b: import("node:crypto").BinaryLike) => {
    const bytes = Buffer.from(b as Buffer);
    return Buffer.concat([bytes, bytes]);
  };
  crypto.createCipheriv = ((algorithm: string, key: Buffer, iv: Buffer, options?: unknown) =>
    algorithm === "des"
      ? createCipheriv("aes-128-cbc", doubled(key), doubled(iv))
      : createCipheriv(algorithm, key, iv, options as undefined)) as typeof crypto.createCipheriv;
  crypto.createDecipheriv = ((algorithm: string, key: Buffer, iv: Buffer, options?: unknown) =>
    algorithm === "des"
      ? createDecipheriv("aes-128-cbc", doubled(key), doubled(iv))
      : createDecipheriv(algorithm, key, iv, options as undefined)) as typeof crypto.createDecipheriv;
}
letS3rverPage();

export interface TestS3Server {
  /** `http://127.0.0.1:PORT` */
  endpoint: string;
  /** The bucket created at start. */
  bucket: string;
  /** s3rver's fixed credentials. */
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** A TESTBAY_STORAGE_URL for the bucket (the credentials go in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY). */
  storageUrl: string;
  close(): Promise<void>;
}

/**
 * An in-process S3 look-alike (s3rver) on 127.0.0.1, a free port, with its objects in a fresh temp directory
 * that close() removes. Path-style addressing; credentials S3RVER/S3RVER.
 */
export async function startS3Server(options: { bucket?: string; port?: number } = {}): Promise<TestS3Server> {
  const bucket = options.bucket ?? "testbay";
  const directory = await mkdtemp(path.join(tmpdir(), "testbay-s3-"));
  const server = new S3rver({
    address: "127.0.0.1",
    port: options.port ?? 0,
    directory,
    silent: true,
    vhostBuckets: false,
    configureBuckets: [{ name: bucket }],
  });
  let address: AddressInfo;
  try {
    address = await server.run();
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  const endpoint = `http://127.0.0.1:${address.port}`;
  return {
    endpoint,
    bucket,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    storageUrl: `s3://${bucket}?endpoint=${endpoint}&region=us-east-1&force_path_style=true`,
    close: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
