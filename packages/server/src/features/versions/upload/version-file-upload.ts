import type { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Static, TSchema } from "typebox";
import { principalOf } from "../../../http/principal.ts";
import { ProblemResponses } from "../../../http/problem.schema.ts";
import type { ExpectedDigest } from "../../../http/upload/content-digest.ts";
import { declaredBody } from "../../../http/upload/request-body.ts";
import { streamUpload } from "../../../http/upload/stream-upload.ts";
import { VersionParams } from "../versions.schemas.ts";

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

type Params = Static<typeof VersionParams>;

export interface VersionFileUpload<Target, Stored> {
  /** The OpenAPI document's summary and description of the PUT. */
  summary: string;
  description: string;
  /** The schema of the 201's body. */
  created: TSchema;
  /** The upload's name in logs and in a 408's detail and fix. */
  what: string;
  service: VersionFileService<Target, Stored>;
  /** The 201's Location: where the stored file's object is read. */
  location(params: Params): string;
  view(target: Target, stored: Stored): unknown;
}

/**
 * The route of a PUT of a version's binary or of its test package, which follow the same rules: refused from
 * Content-Length and what is stored already before the body is read (so it holds back 100 Continue:
 * `deferContinue`), checked against Content-Digest (RFC 9530), answered 201 with the stored object. The rest
 * (refusals, 100 Continue, failures of the body) is every streamed upload's: streamUpload.
 */
export function versionFileUploadRoute<Target, Stored>(upload: VersionFileUpload<Target, Stored>) {
  return {
    config: { auth: ["ci", "admin"] as const, deferContinue: true },
    schema: {
      summary: upload.summary,
      description: upload.description,
      tags: ["apps"],
      params: VersionParams,
      response: { 201: upload.created, ...ProblemResponses },
    },
    handler: (request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) =>
      streamUpload(request, reply, {
        what: upload.what,
        beforeBody: async () => {
          const { package_name, version } = request.params;
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
          return reply
            .code(201)
            .header("location", upload.location(request.params))
            .send(upload.view(target, stored));
        },
      }),
  };
}
