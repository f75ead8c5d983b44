import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { type Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { BodyIdleTimeoutError } from "../body-idle-timeout.ts";

export { BodyIdleTimeoutError };

export interface ReceivedBody {
  size: number;
  sha256: Buffer;
  /** Only when asked for (a Content-Digest with sha-512): hashing twice costs throughput. */
  sha512: Buffer | undefined;
}

/** The body grew past the limit: it was cut off there and nothing was kept. */
export class BodyTooLargeError extends Error {
  override name = "BodyTooLargeError";
}

/** The client went away before the body was complete. */
export class BodyAbortedError extends Error {
  override name = "BodyAbortedError";
}

export interface ReceiveBodyOptions {
  /** Only when asked for (a Content-Digest with sha-512): hashing twice costs throughput. */
  sha512?: boolean;
  /**
   * Gives up (BodyIdleTimeoutError) when no byte arrives for this long, so that a client trickling or
   * stalled mid-body does not hold a connection and a staging file for ever. Unset: no limit.
   */
  idleTimeoutMs?: number;
}

/**
 * Streams a request body into a new file, counting and hashing on the way, never holding more than a
 * chunk in memory. Stops reading at `maxBytes`, or when the body stalls for `idleTimeoutMs`. On any
 * failure the file is removed.
 *
 * The request is piped rather than put in `pipeline()`: pipeline destroys its source on error, and destroying
 * the request destroys the socket, which would leave no way to answer 413.
 */
export async function receiveBody(
  source: Readable,
  target: string,
  maxBytes: number,
  options: ReceiveBodyOptions = {},
): Promise<ReceivedBody> {
  const sha256 = createHash("sha256");
  const sha512 = options.sha512 ? createHash("sha512") : undefined;
  let size = 0;
  const { idleTimeoutMs } = options;
  // One timer, refreshed per chunk (cheaper than a new one), armed from the start: a body that never
  // begins is as stalled as one that stops.
  const idle =
    idleTimeoutMs === undefined
      ? undefined
      : setTimeout(() => meter.destroy(new BodyIdleTimeoutError(idleTimeoutMs)), idleTimeoutMs);
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      idle?.refresh();
      size += chunk.length;
      if (size > maxBytes) return done(new BodyTooLargeError(`body larger than ${maxBytes} bytes`));
      sha256.update(chunk);
      sha512?.update(chunk);
      done(null, chunk);
    },
  });
  // A client that goes away shows up as an "aborted" error, a close before the end, or both.
  const onError = () => meter.destroy(new BodyAbortedError("the client disconnected mid-body"));
  const onClose = () => {
    if (!source.readableEnded) meter.destroy(new BodyAbortedError("the client disconnected mid-body"));
  };
  source.on("error", onError);
  source.on("close", onClose);
  source.pipe(meter);
  try {
    await pipeline(meter, createWriteStream(target, { flags: "wx", mode: 0o600 }));
    return { size, sha256: sha256.digest(), sha512: sha512?.digest() };
  } catch (error) {
    source.unpipe(meter);
    await rm(target, { force: true });
    throw error;
  } finally {
    clearTimeout(idle);
    source.off("error", onError);
    source.off("close", onClose);
  }
}
