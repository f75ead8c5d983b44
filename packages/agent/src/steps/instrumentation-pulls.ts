/**
 * After an instrumentation step's runs, on every shard and whether its tests passed or not (API.md §14): the
 * plan's `pull` paths become artifacts `pulled/<shard>/…` (pull_filter applied), and the coverage files
 * `coverage/<shard>/<file name>`. A path missing on the device is a warning line in the run's log.
 */

import type { Adb } from "../android/adb.ts";
import { artifactSegment } from "../android/artifact-names.ts";
import { pullPaths } from "../android/device-files.ts";
import type { StepTime } from "./device-step.ts";
import type { CoverageFiles } from "./instrumentation-device-setup.ts";
import type { FullInstrumentationStep } from "./instrumentation-options.ts";
import { deviceLost } from "./outcome.ts";
import type { StepContext, StepOutcome } from "./step-types.ts";

/** A pull that takes longer than this is stuck (a directory of screenshots is seconds). */
const pullMs = 300_000;

/** Null when the pulls went as far as the device allowed; the device's loss otherwise. */
export async function pullAfterRun(
  step: FullInstrumentationStep,
  ctx: StepContext,
  adb: Adb,
  coverage: CoverageFiles | null,
  time: StepTime,
): Promise<StepOutcome | null> {
  const shard = ctx.shard?.index ?? 0;
  const warn = (line: string) => ctx.log("agent", line);
  // The plan's own timeout may be spent by the tests; the files are still worth a short while.
  const timeoutMs = () => Math.max(Math.min(time.left(), pullMs), 30_000);
  const common = { adb, workDir: ctx.workDir, artifactsDir: ctx.artifactsDir, shard, timeoutMs, warn };
  if ((step.pull ?? []).length > 0) {
    const pulled = await pullPaths({
      ...common,
      paths: step.pull ?? [],
      filter: (step.pull_filter ?? []).map((pattern) => new RegExp(pattern)),
      folder: "pulled",
    });
    ctx.log("agent", `pulled ${pulled.kept.length} files from the device (artifacts pulled/${shard}/)`);
    if (pulled.deviceLost) return deviceLost(adb.serial, "the device went away while its files were pulled");
  }
  if (coverage !== null) {
    const pulled = await pullPaths({
      ...common,
      paths: coverage.devicePaths(),
      filter: [],
      folder: "coverage",
      name: (devicePath) =>
        `coverage/${shard}/${artifactSegment(devicePath.split("/").at(-1) ?? "coverage.ec")}`,
    });
    ctx.log("agent", `kept ${pulled.kept.length} coverage files (artifacts coverage/${shard}/)`);
    if (pulled.deviceLost) return deviceLost(adb.serial, "the device went away while coverage was pulled");
  }
  return null;
}
