import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { principalOf } from "../../../http/principal.ts";
import { ProblemResponses } from "../../../http/problem.schema.ts";
import { sendStoredFile } from "../../../http/send-stored-file.ts";
import { declaredBody } from "../../../http/upload/request-body.ts";
import { acceptStreamedBodies, streamUpload } from "../../../http/upload/stream-upload.ts";
import { VersionParams } from "../versions.schemas.ts";
import type { VersionFileRecord } from "./version-files.repo.ts";
import { VersionFileList, VersionFileParams, VersionFileView } from "./version-files.schemas.ts";
import type { VersionFilesService } from "./version-files.service.ts";

/** The version file object of API.md §14. */
export function versionFileView(record: VersionFileRecord) {
  return {
    name: record.name,
    size_bytes: record.sizeBytes,
    sha256: record.sha256,
    created_at: record.createdAt,
  };
}

export const versionFilesRoutes: FastifyPluginAsyncTypebox<{ files: VersionFilesService }> = async (
  app,
  { files },
) => {
  // As for version uploads: the body is the file itself, of any content type.
  acceptStreamedBodies(app);

  app.put(
    "/v1/apps/:package_name/versions/:version/files/:name",
    {
      // As versionFileUploadRoute: 100 Continue is held back until the headers passed beforeBody.
      config: { auth: ["ci", "admin"] as const, deferContinue: true },
      schema: {
        summary: "Upload a file for a version's tests",
        description:
          "The body is the file, streamed (≤ 100 MiB; at most 20 files a version): an APK the plan's additional_apks installs, or a file its push puts on the device (API.md §14). 404 app_not_found / app_version_not_found, 409 version_file_exists (the name is taken: a version's files do not change), 409 version_files_limit and 413 file_size_exceeded (declared Content-Length over the limit) are answered from the headers, before any of the body is read (with Expect: 100-continue no body byte is sent). A body that grows past the limit is cut off with 413. Optional `Content-Digest`. The file exists only once the whole body was stored; of concurrent uploads of one name exactly one gets 201.",
        tags: ["apps"],
        params: VersionFileParams,
        response: { 201: VersionFileView, ...ProblemResponses },
      },
    },
    async (request, reply) =>
      streamUpload(request, reply, {
        what: "version file upload",
        beforeBody: async () => {
          const { package_name, version, name } = request.params;
          const declared = declaredBody(request);
          const target = await files.checkBeforeBody(
            principalOf(request).organizationId,
            package_name,
            version,
            name,
            declared.length,
          );
          return { target, digest: declared.digest };
        },
        receive: async ({ target, digest }, body) => {
          const stored = await files.receive(target, body, digest);
          const { package_name, version, name } = request.params;
          return reply
            .code(201)
            .header(
              "location",
              `/v1/apps/${package_name}/versions/${encodeURIComponent(version)}/files/${encodeURIComponent(name)}`,
            )
            .send(versionFileView(stored));
        },
      }),
  );

  app.get(
    "/v1/apps/:package_name/versions/:version/files",
    {
      schema: {
        summary: "List a version's files",
        tags: ["apps"],
        params: VersionParams,
        response: { 200: VersionFileList, ...ProblemResponses },
      },
    },
    async (request) => {
      const { package_name, version } = request.params;
      const found = await files.list(principalOf(request).organizationId, package_name, version);
      return { items: found.files.map(versionFileView) };
    },
  );

  app.get(
    "/v1/apps/:package_name/versions/:version/files/:name",
    {
      schema: {
        summary: "Download a version's file (HEAD: is it there?)",
        description:
          "The file's bytes; ETag is its SHA-256 in quotes. HEAD answers 200 with the ETag when the file is there and 404 version_file_not_found when not: the check before an upload. Supports a single Range (206 with Content-Range, 416 past the end).",
        tags: ["apps"],
        params: VersionFileParams,
        response: { ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { package_name, version, name } = request.params;
      const { file } = await files.get(principalOf(request).organizationId, package_name, version, name);
      return sendStoredFile(request, reply, {
        size: file.sizeBytes,
        sha256: file.sha256,
        contentType: "application/octet-stream",
        fileName: file.name,
        what: "version file",
        open: (range) => files.read(file, range),
      });
    },
  );
};
