/**
 * Gathers what a report is made of (report-model.ts) through the queries the execution pages use: the execution
 * (ExecutionsService.get, which answers 404 for another organization's), its tests as GET /executions/{id}/tests
 * shows them (testCaseViews), its artifacts (ResultsRepo), the plan's quarantines (features/tests), and each
 * failed test's screenshot shrunk to a thumbnail.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Clock } from "../../clock.ts";
import { isoTime } from "../../clock.ts";
import type { BlobStore } from "../../storage/index.ts";
import type { ArtifactRecord, ExecutionsService, ResultsRepo } from "../executions/index.ts";
import type { QuarantinedTests } from "../executions/results.routes.ts";
import { testCaseViews } from "../executions/test-case-view.ts";
import { pngThumbnail } from "./png-thumbnail.ts";
import { budget } from "./report-html.ts";
import {
  type FailureGroupsOfExecution,
  isFailure,
  type ReportModel,
  type ScreenshotShown,
  testCaseKey,
} from "./report-model.ts";

export const thumbnailSize = { maxWidth: 180, maxHeight: 400 };
/** Past this a screenshot is not read to be shrunk (a phone's PNG screenshot is 0.2–3 MB). */
const maxScreenshotBytes = 25 * 1024 * 1024;
/** A JPEG, WebP or GIF is not decoded here: shown as it is when this small, else left out. */
const maxUnshrunkBytes = 48 * 1024;
/** One thumbnail's data: URI at most; a larger one is made again at half the size. */
const maxThumbnailUriBytes = 120 * 1024;
const maxThumbnails = 60;

type StoredArtifact = ArtifactRecord & { position: number; shard: number };

export interface ReportSourceDeps {
  executions: ExecutionsService;
  results: ResultsRepo;
  store: BlobStore;
  clock: Clock;
  quarantines?: QuarantinedTests;
  failureGroups?: FailureGroupsOfExecution;
}

export class ReportSource {
  constructor(private readonly deps: ReportSourceDeps) {}

  /**
   * The report's model; `withScreenshots: false` for the CTRF document, which links artifacts instead of
   * inlining them.
   */
  async model(
    organizationId: string,
    executionId: string,
    options: { withScreenshots: boolean },
  ): Promise<ReportModel> {
    const { executions, results, quarantines, failureGroups } = this.deps;
    const execution = await executions.get(organizationId, executionId);
    const quarantined =
      (execution.testPlanId === null
        ? undefined
        : await quarantines?.ofPlan(organizationId, execution.testPlanId)) ?? new Map();
    const tests = testCaseViews(
      execution,
      await results.testCases(execution.id),
      new Set(quarantined.keys()),
    );
    const groups = failureGroups ? await failureGroups.ofExecution(organizationId, execution.id) : null;
    const screenshots = options.withScreenshots
      ? await this.screenshots(tests.filter(isFailure), await results.artifacts(execution.id))
      : new Map<string, ScreenshotShown>();
    return {
      execution,
      triggeredByName: (await executions.view(organizationId, execution)).triggered_by.name,
      tests,
      quarantines: quarantined,
      screenshots,
      groups,
      generatedAt: isoTime(this.deps.clock.now()),
    };
  }

  /** The first image among each failed test's final try's artifacts, as a thumbnail while the share lasts. */
  private async screenshots(
    failures: ReturnType<typeof testCaseViews>,
    artifacts: StoredArtifact[],
  ): Promise<Map<string, ScreenshotShown>> {
    const shown = new Map<string, ScreenshotShown>();
    const made = new Map<string, ScreenshotShown>();
    let left = budget.thumbnails;
    let count = 0;
    for (const test of failures) {
      const artifact = artifacts.find(
        (a) =>
          a.position === test.device.position &&
          a.shard === test.shard &&
          a.attempt === test.attempt &&
          test.artifacts.includes(a.name) &&
          isImage(a),
      );
      if (!artifact) continue;
      const key = testCaseKey(test);
      if (count >= maxThumbnails || left <= 0) {
        shown.set(key, { kind: "left-out", name: artifact.name, why: "left out to keep this file small" });
        continue;
      }
      let shot = made.get(artifact.blobKey);
      if (!shot) {
        shot = await this.thumbnail(artifact);
        made.set(artifact.blobKey, shot);
        // Shrinking takes the event loop for tens of milliseconds: other requests get a turn between two.
        await nextTurn();
      }
      if (shot.kind === "thumbnail") {
        const size = shot.dataUri.length;
        if (size > left) {
          shown.set(key, { kind: "left-out", name: artifact.name, why: "left out to keep this file small" });
          continue;
        }
        left -= size;
        count++;
      }
      shown.set(key, shot);
    }
    return shown;
  }

  private async thumbnail(artifact: StoredArtifact): Promise<ScreenshotShown> {
    const name = artifact.name;
    if (artifact.sizeBytes > maxScreenshotBytes)
      return { kind: "left-out", name, why: "too large to shrink" };
    const type = imageType(artifact);
    if (type !== "image/png" && artifact.sizeBytes > maxUnshrunkBytes) {
      return { kind: "left-out", name, why: "only PNG screenshots are shrunk into this file" };
    }
    let file: Buffer;
    try {
      file = await bytesOf(await this.deps.store.read(artifact.blobKey));
    } catch {
      return { kind: "left-out", name, why: "could not be read from storage" };
    }
    if (type !== "image/png") {
      return {
        kind: "thumbnail",
        name,
        dataUri: `data:${type};base64,${file.toString("base64")}`,
        width: 0,
        height: 0,
      };
    }
    for (const scale of [1, 0.5]) {
      const thumb = pngThumbnail(file, {
        maxWidth: Math.round(thumbnailSize.maxWidth * scale),
        maxHeight: Math.round(thumbnailSize.maxHeight * scale),
      });
      if (!thumb) return { kind: "left-out", name, why: "not a PNG this report can shrink" };
      const dataUri = `data:image/png;base64,${thumb.png.toString("base64")}`;
      if (dataUri.length <= maxThumbnailUriBytes) {
        return { kind: "thumbnail", name, dataUri, width: thumb.width, height: thumb.height };
      }
    }
    return { kind: "left-out", name, why: "too detailed to keep small" };
  }
}

const imageTypes: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif",
};

/** The artifact's image type, from what the agent sent or else its name's extension; null for anything else. */
function imageType(artifact: Pick<ArtifactRecord, "contentType" | "name">): string | null {
  const sent = artifact.contentType.split(";", 1)[0]?.trim().toLowerCase() ?? "";
  if (Object.values(imageTypes).includes(sent)) return sent;
  const extension = artifact.name.slice(artifact.name.lastIndexOf(".") + 1).toLowerCase();
  return imageTypes[extension] ?? null;
}

const isImage = (artifact: Pick<ArtifactRecord, "contentType" | "name">) => imageType(artifact) !== null;

async function bytesOf(stream: AsyncIterable<Buffer | string>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}
