import path from "node:path";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import type { BackgroundJobs } from "../../background-jobs.ts";
import type { Clock } from "../../clock.ts";
import type { Config } from "../../config.ts";
import type { DatabaseHandle } from "../../db/kysely.ts";
import type { BlobStore } from "../../storage/index.ts";
import type { AppsService } from "../apps/index.ts";
import { VersionFilesRepo, VersionFilesService, versionFilesRoutes } from "./files/index.ts";
import { sweepOrphanedBlobs } from "./orphaned-blobs.ts";
import { TestPackagesRepo, TestPackagesService, testPackagesRoutes } from "./test-packages/index.ts";
import { VersionsRepo } from "./versions.repo.ts";
import { versionsRoutes } from "./versions.routes.ts";
import { VersionsService } from "./versions.service.ts";

export interface VersionsDeps {
  database: DatabaseHandle;
  clock: Clock;
  log: FastifyBaseLogger;
  store: BlobStore;
  config: Pick<Config, "dataDir" | "maxUploadBytes" | "bodyIdleTimeoutSeconds" | "keepVersions">;
  apps: AppsService;
  /** Told after an upload's version.uploaded event is committed (the webhooks' fan-out sends it at once). */
  onEventAppended: () => void;
}

/**
 * Versions' composition root: app versions, their test packages and their files (uploads, routes), and on start the
 * uploads a stopped server left half done, then TESTBAY_KEEP_VERSIONS' retention every hour when it is set.
 */
export function createVersions({ database, clock, log, store, config, apps, onEventAppended }: VersionsDeps) {
  const upload = {
    store,
    clock,
    stagingDir: path.join(config.dataDir, "tmp", "uploads"),
    maxUploadBytes: config.maxUploadBytes,
    bodyIdleTimeoutMs: config.bodyIdleTimeoutSeconds * 1000,
  };
  const testPackagesRepo = new TestPackagesRepo(database.db);
  const filesRepo = new VersionFilesRepo(database.db);
  const versions = new VersionsService({
    onEventAppended,
    repo: new VersionsRepo(database.db),
    testPackages: testPackagesRepo,
    files: filesRepo,
    apps,
    ...upload,
  });
  const testPackages = new TestPackagesService({ repo: testPackagesRepo, versions, ...upload });
  const files = new VersionFilesService({ repo: filesRepo, versions, ...upload });
  return {
    versions,
    testPackages,
    files,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(versionsRoutes, { versions });
      await app.register(testPackagesRoutes, { testPackages });
      await app.register(versionFilesRoutes, { files });
    },
    async start(jobs: BackgroundJobs): Promise<void> {
      await versions.cleanUp(log);
      await sweepOrphanedBlobs(
        store,
        clock,
        [versions.blobOwner(), testPackages.blobOwner(), files.blobOwner()],
        log,
      );
      const keepVersions = config.keepVersions;
      if (keepVersions !== undefined) {
        await jobs.hourly("delete versions beyond TESTBAY_KEEP_VERSIONS", () =>
          versions.enforceRetention(keepVersions, log),
        );
      }
    },
  };
}
