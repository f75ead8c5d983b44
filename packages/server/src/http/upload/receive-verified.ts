import { timingSafeEqual } from "node:crypto";
import type { Readable } from "node:stream";
import { ApiError } from "../../errors.ts";
import type { ExpectedDigest } from "./content-digest.ts";
import { BodyTooLargeError, receiveBody } from "./receive-body.ts";

export interface UploadLimits {
  maxUploadBytes: number;
  /** A body with no byte for this long is cut off; unset: never. */
  bodyIdleTimeoutMs?: number;
}

export function fileSizeExceeded(maxUploadBytes: number, detail: string): ApiError {
  return new ApiError("file_size_exceeded", { detail, extra: { limit_bytes: maxUploadBytes } });
}

/**
 * Receives an upload's body into `staged` under the size limit and checks it against the Content-Digest, the
 * steps every binary upload (version, test package) shares before its own inspection. The caller removes
 * `staged` whatever happens.
 *
 * @throws ApiError file_size_exceeded / checksum_mismatch; receiveBody's own errors (aborted, stalled) as they are.
 */
export async function receiveVerified(
  body: Readable,
  staged: string,
  limits: UploadLimits,
  digest: ExpectedDigest | undefined,
): Promise<{ size: number; sha256: Buffer }> {
  let received: Awaited<ReturnType<typeof receiveBody>>;
  try {
    received = await receiveBody(body, staged, limits.maxUploadBytes, {
      ...(limits.bodyIdleTimeoutMs ? { idleTimeoutMs: limits.bodyIdleTimeoutMs } : {}),
      sha512: digest?.algorithm === "sha-512",
    });
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      throw fileSizeExceeded(
        limits.maxUploadBytes,
        `The body passed the limit of ${limits.maxUploadBytes} bytes and was cut off there.`,
      );
    }
    throw error;
  }
  if (digest) {
    const actual = (digest.algorithm === "sha-256" ? received.sha256 : received.sha512) ?? Buffer.alloc(0);
    if (actual.length !== digest.value.length || !timingSafeEqual(actual, digest.value)) {
      throw new ApiError("checksum_mismatch", {
        detail: `The body's ${digest.algorithm} is ${actual.toString("base64")}, not the ${digest.value.toString("base64")} that Content-Digest declares.`,
      });
    }
  }
  return { size: received.size, sha256: received.sha256 };
}
