import type { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ExpectedDigest } from "../../../http/upload/content-digest.ts";
import { declaredBody } from "../../../http/upload/request-body.ts";
import { streamUpload } from "../../../http/upload/stream-upload.ts";
import { principalOf } from "../../auth/index.ts";

/** What a version's file (its binary, its test package) needs from the service that stores it. */
export interface VersionFileService<Target, Stored> {
  /** The refusals from the headers alone: unknown app or version (404), already there (409), too large (413). */
  checkBeforeBody(
    organizationId: string,
    packageName: string,
    version: string,
    contentLength: number | undefined,
  ): Promise<Target>;
  /** Receives, verifies against the Content-Digest and inspects the body, then stores it. */
  receive(target: Target, body: Readable, digest: ExpectedDigest | undefined): Promise<Stored>;
}

export interface VersionFileUpload<Target, Stored> {
  /** The upload's name in logs and in a 408's detail and fix. */
  what: string;
  service: VersionFileService<Target, Stored>;
  /** The 201's Location: where the stored file's object is read. */
  location: string;
  view(target: Target, stored: Stored): unknown;
}

/**
 * PUT of a version's binary or of its test package, which follow the same rules: refused from Content-Length
 * and what is stored already before the body is read, checked against Content-Digest (RFC 9530), answered 201
 * with the stored object. The rest (100 Continue, failures of the body) is every streamed upload's
 * (streamUpload).
 */
export function uploadVersionFile<Target, Stored>(
  request: FastifyRequest<{ Params: { package_name: string; version: string } }>,
  reply: FastifyReply,
  upload: VersionFileUpload<Target, Stored>,
): Promise<FastifyReply> {
  const { package_name, version } = request.params;
  return streamUpload(request, reply, {
    what: upload.what,
    beforeBody: async () => {
      const declared = declaredBody(request);
      const organizationId = principalOf(request).organizationId;
      const target = await upload.service.checkBeforeBody(
        organizationId,
        package_name,
        version,
        declared.length,
      );
      return { target, digest: declared.digest };
    },
    receive: async ({ target, digest }, body) => {
      const stored = await upload.service.receive(target, body, digest);
      return reply.code(201).header("location", upload.location).send(upload.view(target, stored));
    },
  });
}
