import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { sendStoredFile } from "../../http/send-stored-file.ts";
import { acceptStreamedBodies } from "../../http/upload/stream-upload.ts";
import { PackageName } from "../apps/index.ts";
import { versionFileUploadRoute } from "./upload/version-file-upload.ts";
import { versionFileDownloadSchema } from "./version-file-download.ts";
import { VersionList, VersionListQuery, VersionParams, VersionView } from "./versions.schemas.ts";
import { type VersionsService, versionView } from "./versions.service.ts";

export const versionsRoutes: FastifyPluginAsyncTypebox<{ versions: VersionsService }> = async (
  app,
  { versions },
) => {
  // The upload body is the binary itself, of any content type.
  acceptStreamedBodies(app);

  app.put(
    "/v1/apps/:package_name/versions/:version",
    versionFileUploadRoute({
      summary: "Upload a version's binary",
      description:
        "The body is the binary (APK, AAB, IPA or zipped .app), streamed; Content-Length or chunked. 404 app_not_found, 409 app_version_exists and 413 file_size_exceeded (declared Content-Length over the limit) are answered from the headers alone, before any of the body is read: with Expect: 100-continue no body byte is sent; without it, the server answers at once, then reads and discards at most 1 MiB of the body for at most 2 s before closing (lingering close), so the client reads the answer. A body that grows past the limit is cut off with 413. Optional `Content-Digest: sha-256=:<base64>:` (RFC 9530). The version exists only once the whole body was stored, verified and inspected; of concurrent uploads of one version exactly one gets 201.",
      created: VersionView,
      what: "upload",
      service: versions,
      location: ({ package_name, version }) =>
        `/v1/apps/${package_name}/versions/${encodeURIComponent(version)}`,
      view: (target, record) => versionView(target.app, record, null),
    }),
  );

  app.get(
    "/v1/apps/:package_name/versions/:version",
    {
      schema: {
        summary: "Get a version (HEAD: is it registered?)",
        description:
          "HEAD answers 200 when the version is registered and 404 when not: the cheap check before an upload.",
        tags: ["apps"],
        params: VersionParams,
        response: { 200: VersionView, ...ProblemResponses },
      },
    },
    async (request) => {
      const { app: target, version } = await versions.get(
        principalOf(request).organizationId,
        request.params.package_name,
        request.params.version,
      );
      return versions.view(target, version);
    },
  );

  app.delete(
    "/v1/apps/:package_name/versions/:version",
    {
      config: { auth: ["admin"] },
      schema: {
        summary: "Delete a version, its binary, its test package and its files (admin)",
        description:
          "204 once the version's record, binary, test package and files are gone. 409 app_version_in_use while an execution of it is queued or running (`execution_ids` names them). Past executions keep their records, with the package name and version they ran; the version then answers 404 app_version_not_found and can be uploaded again. Old versions can also be deleted automatically: TESTBAY_KEEP_VERSIONS.",
        tags: ["apps"],
        params: VersionParams,
        response: { 204: Type.Null({ description: "Deleted" }), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { package_name, version } = request.params;
      await versions.delete(principalOf(request).organizationId, package_name, version);
      return reply.code(204).send(null);
    },
  );

  app.get(
    "/v1/apps/:package_name/versions",
    {
      schema: {
        summary: "List an app's versions, newest first",
        tags: ["apps"],
        params: Type.Object({ package_name: PackageName }),
        querystring: VersionListQuery,
        response: { 200: VersionList, ...ProblemResponses },
      },
    },
    async (request) =>
      versions.list(principalOf(request).organizationId, request.params.package_name, request.query),
  );

  app.get(
    "/v1/apps/:package_name/versions/:version/binary",
    { schema: versionFileDownloadSchema("Download a version's binary") },
    async (request, reply) => {
      const { app: target, version } = await versions.get(
        principalOf(request).organizationId,
        request.params.package_name,
        request.params.version,
      );
      const format = version.binary.format === "app" ? "zip" : version.binary.format;
      return sendStoredFile(request, reply, {
        size: version.sizeBytes,
        sha256: version.sha256,
        contentType: "application/octet-stream",
        fileName: `${target.packageName}-${version.version}.${format}`,
        what: "binary",
        open: (range) => versions.readBinary(version, range),
      });
    },
  );
};
