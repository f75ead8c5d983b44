/**
 * What a failed XCUITest case names as its artifacts (xcuitest-step.ts): the attachments xcresulttool exported
 * from the result bundle (the screenshot XCUITest takes at the failure first), copied into the artifacts
 * under names made like an Android failure's (artifact-names.ts), then the device log and the video, which
 * cover the whole step (a simulator's captures are not cut per test).
 */
import { copyFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { testArtifactName } from "../android/artifact-names.ts";
import type { IosDevice } from "../apple/ios-device.ts";
import { type AttachmentsByTest, attachmentKey } from "../apple/read-xcresult.ts";
import type { SimulatorCaptures } from "../apple/simulator-captures.ts";
import type { StepContext, TestCase } from "./step-types.ts";

/** A failed test case with its attachments copied into the artifacts, the device log and the video named. */
export async function withAttachments(
  testCase: TestCase,
  attachments: AttachmentsByTest,
  options: { ctx: StepContext; device: IosDevice; captures: SimulatorCaptures | null },
): Promise<TestCase> {
  const artifacts: string[] = [];
  const folder = options.captures?.folder ?? `device-${options.device.udid}`;
  const dot = testCase.classname.indexOf(".");
  const className = dot > 0 ? testCase.classname.slice(dot + 1) : testCase.classname;
  const files = attachments.get(attachmentKey(className, testCase.name)) ?? [];
  // The failure's own screenshot first, then whatever else the test attached.
  const ordered = [...files].sort(
    (a, b) => Number(b.associatedWithFailure) - Number(a.associatedWithFailure),
  );
  for (const [index, attachment] of ordered.entries()) {
    const extension = path.extname(attachment.file).slice(1).toLowerCase() || "bin";
    const name = testArtifactName(
      `${folder}/screenshots`,
      testCase.classname,
      index === 0 ? testCase.name : `${testCase.name}.${index + 1}`,
      extension,
      testCase.retry ?? 0,
    );
    try {
      await mkdir(path.dirname(path.join(options.ctx.artifactsDir, name)), { recursive: true });
      await copyFile(attachment.file, path.join(options.ctx.artifactsDir, name));
      artifacts.push(name);
    } catch (error) {
      options.ctx.log(
        "agent",
        `attachment ${path.basename(attachment.file)} not kept: ${(error as Error).message}`,
      );
    }
  }
  if (options.captures?.logArtifact) artifacts.push(options.captures.logArtifact);
  // Kept whenever a test failed (on_failure) or always: a failure can name it now.
  if (options.captures?.videoArtifact) artifacts.push(options.captures.videoArtifact);
  return { ...testCase, artifacts };
}
