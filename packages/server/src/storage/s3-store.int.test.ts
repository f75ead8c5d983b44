import { createHash, randomBytes } from "node:crypto";
import { access, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startS3Server, type TestS3Server } from "../../test/s3-server.ts";
import { openBlobStore } from "./index.ts";
import { BlobNotFoundError, S3BlobStore, type S3BlobStoreOptions } from "./s3-store.ts";
import { parseS3Url } from "./s3-url.ts";

const MiB = 1024 * 1024;

let s3: TestS3Server;
let dir: string;
const stores: S3BlobStore[] = [];

beforeAll(async () => {
  s3 = await startS3Server();
  dir = await mkdtemp(path.join(tmpdir(), "testbay-s3-store-"));
});

afterAll(async () => {
  for (const store of stores) await store.close();
  await s3?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

afterEach(() => {
  vi.unstubAllEnvs();
});

function openStore(options: Partial<S3BlobStoreOptions> = {}): S3BlobStore {
  const store = new S3BlobStore({
    ...parseS3Url(s3.storageUrl),
    credentials: s3.credentials,
    ...options,
  });
  stores.push(store);
  return store;
}

let fileCount = 0;
async function localFile(content: Buffer): Promise<string> {
  const file = path.join(dir, `upload-${++fileCount}`);
  await writeFile(file, content);
  return file;
}

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");
const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

async function allKeys(store: S3BlobStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of store.keys()) keys.push(key);
  return keys;
}

describe("S3BlobStore against s3rver", () => {
  it("stores a file bigger than one part (multipart) and reads it back byte for byte; the local file is gone", async () => {
    const store = openStore({ partSize: 5 * MiB });
    const content = randomBytes(12 * MiB + 12_345);
    const file = await localFile(content);
    await store.putFile("versions/org1/big_file-1", file);

    expect(await exists(file)).toBe(false);
    const back = await bytesOf(await store.read("versions/org1/big_file-1"));
    expect(back.length).toBe(content.length);
    expect(sha256(back)).toBe(sha256(content));
  });

  it("stores small and empty files with a single request", async () => {
    const store = openStore();
    const small = randomBytes(1000);
    await store.putFile("artifacts/ex1/small", await localFile(small));
    expect(await bytesOf(await store.read("artifacts/ex1/small"))).toEqual(small);

    const emptyFile = await localFile(Buffer.alloc(0));
    await store.putFile("artifacts/ex1/empty", emptyFile);
    expect(await exists(emptyFile)).toBe(false);
    expect((await bytesOf(await store.read("artifacts/ex1/empty"))).length).toBe(0);
  });

  it("reads byte ranges with inclusive ends: inside, from the start, and to the last byte", async () => {
    const store = openStore();
    const content = randomBytes(256 * 1024);
    await store.putFile("versions/org1/ranged", await localFile(content));

    // Compared as hex: toEqual on big Buffers goes byte by byte and takes seconds.
    const read = async (start: number, end: number) =>
      (await bytesOf(await store.read("versions/org1/ranged", { start, end }))).toString("hex");
    const hex = (start: number, end?: number) => content.subarray(start, end).toString("hex");
    expect(await read(100, 199)).toBe(hex(100, 200));
    expect(await read(0, 9)).toBe(hex(0, 10));
    expect(await read(1000, content.length - 1)).toBe(hex(1000));
    expect(await read(content.length - 1, content.length - 1)).toBe(hex(content.length - 1));
  });

  it("refuses an answer that is not the range asked for (callers have already sent its Content-Length)", async () => {
    const store = openStore();
    await store.putFile("versions/org1/first-byte", await localFile(randomBytes(100)));
    // s3rver takes the end of `bytes=0-0` for "none" and answers the whole object: a handy misbehaving server.
    await expect(store.read("versions/org1/first-byte", { start: 0, end: 0 })).rejects.toThrow(
      'answered bytes 0-0 of versions/org1/first-byte with "bytes 0-99/100"',
    );
  });

  it("overwrites a key whole", async () => {
    const store = openStore();
    await store.putFile("artifacts/ex2/log", await localFile(Buffer.from("first")));
    await store.putFile("artifacts/ex2/log", await localFile(Buffer.from("second, longer")));
    expect((await bytesOf(await store.read("artifacts/ex2/log"))).toString()).toBe("second, longer");
  });

  it("rejects a read of a missing key with a BlobNotFoundError (code ENOENT, like the file store)", async () => {
    const store = openStore();
    const error = await store.read("versions/org1/nothing-here").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BlobNotFoundError);
    expect(error).toMatchObject({ code: "ENOENT", key: "versions/org1/nothing-here" });
  });

  it("deletes objects; deleting a missing key succeeds", async () => {
    const store = openStore();
    await store.putFile("versions/org2/doomed", await localFile(Buffer.from("bye")));
    await store.delete("versions/org2/doomed");
    await expect(store.read("versions/org2/doomed")).rejects.toBeInstanceOf(BlobNotFoundError);
    await expect(store.delete("versions/org2/doomed")).resolves.toBeUndefined();
    await expect(store.delete("versions/org2/never-was")).resolves.toBeUndefined();
  });

  it("refuses keys the server could not have made", async () => {
    const store = openStore();
    const file = await localFile(Buffer.from("x"));
    await expect(store.putFile("../escape", file)).rejects.toThrow(/invalid blob key/);
    await expect(store.read("versions/a/b.txt")).rejects.toThrow(/invalid blob key/);
    await expect(store.delete("")).rejects.toThrow(/invalid blob key/);
    expect(await exists(file)).toBe(true);
  });

  it("fails putFile when the local file is missing, and stores nothing", async () => {
    const store = openStore();
    await expect(store.putFile("versions/org1/ghost", path.join(dir, "no-such-file"))).rejects.toMatchObject({
      code: "ENOENT",
    });
    await expect(store.read("versions/org1/ghost")).rejects.toBeInstanceOf(BlobNotFoundError);
  });

  it("lists every key, exactly as stored, across several ListObjectsV2 pages", async () => {
    const server = await startS3Server({ bucket: "paging" });
    try {
      const store = openStore({ ...parseS3Url(server.storageUrl), listPageSize: 3 });
      const keys = [
        ...Array.from({ length: 8 }, (_, i) => `versions/org_${i % 3}/01HZX${i}ABC-def_${i}`),
        "artifacts/ex_1/A-b_C",
        "artifacts/ex_1/z",
      ];
      for (const key of keys) await store.putFile(key, await localFile(Buffer.from(key)));

      const listed = await allKeys(store);
      expect(listed.toSorted()).toEqual(keys.toSorted());
      expect(new Set(listed).size).toBe(listed.length);

      // The sweep deletes while it lists: paging must survive that.
      for await (const key of store.keys()) if (key.startsWith("versions/")) await store.delete(key);
      expect((await allKeys(store)).toSorted()).toEqual(["artifacts/ex_1/A-b_C", "artifacts/ex_1/z"]);
    } finally {
      await server.close();
    }
  });

  it("lists nothing in an empty bucket", async () => {
    const server = await startS3Server({ bucket: "empty" });
    try {
      expect(await allKeys(openStore(parseS3Url(server.storageUrl)))).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("check() passes for the bucket, and fails clearly when the bucket does not exist", async () => {
    await expect(openStore().check()).resolves.toBeUndefined();
    await expect(openStore({ bucket: "no-such-bucket" }).check()).rejects.toThrow(
      `S3 bucket no-such-bucket at ${s3.endpoint} does not exist`,
    );
  });

  it("check() fails when nothing answers at the endpoint", async () => {
    const store = openStore({ endpoint: "http://127.0.0.1:9", checkTimeoutMs: 1500 });
    await expect(store.check()).rejects.toThrow(/cannot reach S3 bucket testbay at http:\/\/127\.0\.0\.1:9/);
  });

  it("openBlobStore opens an s3:// URL with credentials from the AWS environment variables", async () => {
    vi.stubEnv("AWS_ACCESS_KEY_ID", "S3RVER");
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", "S3RVER");
    vi.stubEnv("AWS_SESSION_TOKEN", undefined);
    vi.stubEnv("AWS_PROFILE", undefined);
    const store = await openBlobStore(s3.storageUrl);
    expect(store).toBeInstanceOf(S3BlobStore);
    stores.push(store as S3BlobStore);
    await store.check();
    await store.putFile("artifacts/env/creds", await localFile(Buffer.from("via env")));
    expect((await bytesOf(await store.read("artifacts/env/creds"))).toString()).toBe("via env");
  });
});
