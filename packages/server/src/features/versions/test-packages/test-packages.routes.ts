import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { principalOf } from "../../../http/principal.ts";
import { ProblemResponses } from "../../../http/problem.schema.ts";
import { sendStoredFile } from "../../../http/send-stored-file.ts";
import { acceptStreamedBodies } from "../../../http/upload/stream-upload.ts";
import { versionFileUploadRoute } from "../upload/version-file-upload.ts";
import { versionFileDownloadSchema } from "../version-file-download.ts";
import { VersionParams } from "../versions.schemas.ts";
import { testPackageView } from "./test-package-view.ts";
import { TestPackageView } from "./test-packages.schemas.ts";
import type { TestPackagesService } from "./test-packages.service.ts";

export const testPackagesRoutes: FastifyPluginAsyncTypebox<{ testPackages: TestPackagesService }> = async (
  app,
  { testPackages },
) => {
  // As for version uploads: the body is the test package itself, of any content type.
  acceptStreamedBodies(app);

  app.put(
    "/v1/apps/:package_name/versions/:version/test-package",
    versionFileUploadRoute({
      summary: "Upload a version's test package",
      description:
        "The body is the Android instrumentation APK (app-debug-androidTest.apk), or for iOS a zip of what xcodebuild build-for-testing writes to Build/Products (one .xctestrun at the zip's top or one folder down, the -Runner.app hosts with their test bundles, and the app under test or not: agents always test the version's own IPA, pointing the .xctestrun's UITargetAppPath and app-hosted TestHostPath at it), streamed, by the rules of the version upload: 404 app_not_found / app_version_not_found, 409 test_package_exists and 413 file_size_exceeded are answered from the headers, before any of the body is read (with Expect: 100-continue no body byte is sent). 400 test_package_mismatch when its <instrumentation android:targetPackage>, or a UI test target's target app, is another app; 400 unsupported_binary when it is neither an APK with an <instrumentation> nor a zip with one readable .xctestrun whose test hosts and test bundles are in it (reason xctest_unreadable, with what is wrong). Optional `Content-Digest`. The test package exists only once the whole body was stored and inspected.",
      created: TestPackageView,
      what: "test package upload",
      service: testPackages,
      location: ({ package_name, version }) =>
        `/v1/apps/${package_name}/versions/${encodeURIComponent(version)}/test-package`,
      view: (target, record) => testPackageView(target.app, target.version, record),
    }),
  );

  app.get(
    "/v1/apps/:package_name/versions/:version/test-package",
    {
      schema: {
        summary: "Get a version's test package (HEAD: is it there?)",
        description:
          "HEAD answers 200 when the version has a test package and 404 when not: the check before an upload.",
        tags: ["apps"],
        params: VersionParams,
        response: { 200: TestPackageView, ...ProblemResponses },
      },
    },
    async (request) => {
      const found = await testPackages.get(
        principalOf(request).organizationId,
        request.params.package_name,
        request.params.version,
      );
      return testPackageView(found.app, found.version, found.testPackage);
    },
  );

  app.get(
    "/v1/apps/:package_name/versions/:version/test-package/binary",
    { schema: versionFileDownloadSchema("Download a version's test package") },
    async (request, reply) => {
      const {
        app: target,
        version,
        testPackage,
      } = await testPackages.get(
        principalOf(request).organizationId,
        request.params.package_name,
        request.params.version,
      );
      return sendStoredFile(request, reply, {
        size: testPackage.sizeBytes,
        sha256: testPackage.sha256,
        contentType: "application/octet-stream",
        // The name ends in .apk: adb installs nothing else.
        fileName: `${target.packageName}-${version.version}-androidTest.apk`,
        what: "test package",
        open: (range) => testPackages.read(testPackage, range),
      });
    },
  );
};
