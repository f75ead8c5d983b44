import type { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../errors.ts";
import type { ByteRange } from "../storage/index.ts";
import { parseRange } from "./byte-range.ts";

export interface StoredFile {
  size: number;
  sha256: string;
  contentType: string;
  /** A file name for Content-Disposition: attachment. */
  fileName: string;
  /** Named in a 416's detail: "binary", "artifact". */
  what: string;
  open(range?: ByteRange): Promise<Readable>;
}

/**
 * Sends a stored file as a download: whole, or one Range (206 with Content-Range; 416 past the end). The
 * SHA-256 is the ETag. Always an attachment, so a browser never renders what a build or a test wrote.
 */
export async function sendStoredFile(request: FastifyRequest, reply: FastifyReply, file: StoredFile) {
  const { size } = file;
  const wanted = parseRange(request.headers.range, size);
  reply
    .header("accept-ranges", "bytes")
    .header("etag", `"${file.sha256}"`)
    .header("content-type", file.contentType)
    .header("content-disposition", `attachment; filename="${file.fileName.replace(/["\\\r\n]/g, "")}"`);
  if (wanted.kind === "unsatisfiable") {
    reply.header("content-range", `bytes */${size}`);
    throw new ApiError("range_not_satisfiable", {
      detail: `The range ${request.headers.range} lies outside the ${size} bytes of the ${file.what}.`,
    });
  }
  if (wanted.kind === "partial") {
    const { start, end } = wanted.range;
    reply
      .code(206)
      .header("content-range", `bytes ${start}-${end}/${size}`)
      .header("content-length", end - start + 1);
    return reply.send(await file.open(wanted.range));
  }
  reply.header("content-length", size);
  return reply.send(await file.open());
}
