import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough, Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BodyAbortedError, BodyIdleTimeoutError, BodyTooLargeError, receiveBody } from "./receive-body.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "receive-body-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The body in chunks of uneven sizes, as a socket delivers them. */
function chunked(body: Buffer): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0, i = 0; at < body.length; i++) {
    const size = [65_536, 1, 16_384, 300_000, 65_535][i % 5] as number;
    chunks.push(body.subarray(at, at + size));
    at += size;
  }
  return chunks;
}

describe("receiveBody", () => {
  it("writes, counts and hashes every byte of a body of several batches, in order", async () => {
    const body = randomBytes(5 * 1024 * 1024 + 12_345);
    const target = path.join(dir, "body.part");
    const received = await receiveBody(Readable.from(chunked(body)), target, body.length, { sha512: true });
    expect(received.size).toBe(body.length);
    expect(received.sha256).toEqual(createHash("sha256").update(body).digest());
    expect(received.sha512).toEqual(createHash("sha512").update(body).digest());
    expect((await readFile(target)).equals(body)).toBe(true);
  });

  it("takes an empty body, and a body of exactly the limit", async () => {
    const empty = await receiveBody(Readable.from([]), path.join(dir, "empty.part"), 10);
    expect(empty.size).toBe(0);
    expect(empty.sha256).toEqual(createHash("sha256").digest());
    expect(empty.sha512).toBeUndefined();
    expect(await readFile(path.join(dir, "empty.part"))).toHaveLength(0);

    const body = randomBytes(100_000);
    const full = await receiveBody(Readable.from(chunked(body)), path.join(dir, "full.part"), body.length);
    expect(full.size).toBe(body.length);
  });

  it("stops at the limit, keeps nothing and leaves the source unread and undestroyed", async () => {
    const source = new PassThrough();
    const done = receiveBody(source, path.join(dir, "big.part"), 3 * 1024 * 1024);
    let settled = false;
    done.catch(() => undefined).finally(() => (settled = true));
    const chunk = Buffer.alloc(64 * 1024, 7);
    // Up to twice the limit, as fast as the reader takes it (a socket's backpressure), until it gives up.
    for (let written = 0; written < 6 * 1024 * 1024 && !settled; written += chunk.length) {
      if (!source.write(chunk)) await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await expect(done).rejects.toBeInstanceOf(BodyTooLargeError);
    expect(source.destroyed).toBe(false);
    expect(source.listenerCount("data")).toBe(0);
    expect(await readdir(dir)).toEqual([]);
  });

  it("removes the file when the client goes away mid-body", async () => {
    const source = new PassThrough();
    const done = receiveBody(source, path.join(dir, "gone.part"), 100 * 1024 * 1024);
    source.write(randomBytes(3 * 1024 * 1024));
    await new Promise((resolve) => setTimeout(resolve, 20));
    source.destroy(new Error("aborted"));
    await expect(done).rejects.toBeInstanceOf(BodyAbortedError);
    expect(await readdir(dir)).toEqual([]);
  });

  it("gives up on a body that stalls for the idle timeout, keeps nothing and leaves the source undestroyed", async () => {
    const source = new PassThrough();
    const done = receiveBody(source, path.join(dir, "stalled.part"), 1024 * 1024, { idleTimeoutMs: 50 });
    source.write(randomBytes(1000));
    await expect(done).rejects.toBeInstanceOf(BodyIdleTimeoutError);
    // Left to the route: it answers 408 on the same connection, then closes it.
    expect(source.destroyed).toBe(false);
    expect(await readdir(dir)).toEqual([]);
  });

  it("does not time out a body whose bytes keep coming, each within the idle timeout", async () => {
    const source = new PassThrough();
    const done = receiveBody(source, path.join(dir, "slow.part"), 1024, { idleTimeoutMs: 200 });
    for (let i = 0; i < 5; i++) {
      source.write(Buffer.from("x"));
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
    source.end();
    expect((await done).size).toBe(5);
  });
});
