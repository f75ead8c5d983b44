/**
 * What an instrumentation step does to its device before the app goes on (API.md §14): the device entry's
 * locale and orientation; the orchestrator's two APKs (from --android-tools) and the step's additional_apks,
 * both installed before the app; and, once the app is there, the version files pushed to their device paths.
 * Coverage files are named here too, per run, so that no run overwrites another's.
 */

import type { Adb } from "../android/adb.ts";
import { findOrchestratorApks } from "../android/android-tools.ts";
import { pushFile } from "../android/device-files.ts";
import { apkNamed } from "../android/install-apk.ts";
import { applyDeviceEntrySettings } from "./device-entry-settings.ts";
import type { StepTime } from "./device-step.ts";
import type { FullInstrumentationStep } from "./instrumentation-options.ts";
import { deviceLost, errored } from "./outcome.ts";
import type { StepContext, StepOutcome } from "./step-types.ts";

/** A settings change or a push that takes longer than this is stuck. */
const shortCommandMs = 120_000;

/** Where the runner writes coverage on the device: public storage the app may write and adb may read. */
export const COVERAGE_DIR = "/sdcard/Download";

/**
 * Coverage file names for one shard's runs. Without the orchestrator AndroidJUnitRunner writes one file per
 * instrumentation (`-e coverageFile`, replaced by the next run), so the first run writes the documented
 * `testbay-<shard>.ec` and each later one (a batch, a rerun) its own `testbay-<shard>-<n>.ec`. Under the
 * orchestrator each test's instrumentation writes `<Class>#<method>.ec` into `-e coverageFilePath` (the
 * orchestrator's javadoc), so one directory holds them all.
 */
export class CoverageFiles {
  private runs = 0;
  readonly files: string[] = [];

  constructor(
    readonly shard: number,
    readonly orchestrated: boolean,
  ) {}

  get dir(): string {
    return `${COVERAGE_DIR}/testbay-coverage/`;
  }

  nextRun(): { file: string } | { dir: string } {
    if (this.orchestrated) return { dir: this.dir };
    this.runs++;
    const file = `${COVERAGE_DIR}/testbay-${this.shard}${this.runs === 1 ? "" : `-${this.runs}`}.ec`;
    this.files.push(file);
    return { file };
  }

  /** What to pull after the run. */
  devicePaths(): string[] {
    return this.orchestrated ? [this.dir] : [...this.files];
  }

  /** What a previous run on a device that is not reset may have left (removed before this one). */
  leftovers(): string {
    return `${this.dir} ${COVERAGE_DIR}/testbay-${this.shard}.ec ${COVERAGE_DIR}/testbay-${this.shard}-*.ec`;
  }
}

export type DeviceSetup =
  | {
      /** APKs to install before the app, in order. */
      apksFirst: string[];
      /** Pushes the version files (after the install: a path under the app's own storage needs the app). */
      pushFiles(): Promise<StepOutcome | null>;
      coverage: CoverageFiles | null;
    }
  | { outcome: StepOutcome };

export async function prepareDevice(
  step: FullInstrumentationStep,
  ctx: StepContext,
  adb: Adb,
  time: StepTime,
): Promise<DeviceSetup> {
  const limit = () => Math.min(time.left(), shortCommandMs);
  const settings = await applyDeviceEntrySettings(ctx, adb, time);
  if (settings) return { outcome: settings };

  const apksFirst: string[] = [];
  if (step.use_orchestrator) {
    const found = await findOrchestratorApks(ctx.androidTools);
    if ("missing" in found) return { outcome: errored(found.missing) };
    apksFirst.push(found.orchestrator, found.testServices);
  }
  const fetch = async (name: string, why: string): Promise<string | StepOutcome> => {
    if (!ctx.versionFilePath) return errored(`${why} ${name}: this agent was given no version files`);
    try {
      return await ctx.versionFilePath(name);
    } catch (error) {
      return errored(`could not fetch the version file ${name} (${why}): ${(error as Error).message}`);
    }
  };
  for (const name of step.additional_apks ?? []) {
    const local = await fetch(name, "additional_apks");
    if (typeof local !== "string") return { outcome: local };
    apksFirst.push(await apkNamed(local, ctx.workDir, `extra-${name.replace(/\.apk$/i, "")}`));
  }

  const pushFiles = async (): Promise<StepOutcome | null> => {
    for (const { file, to } of step.push ?? []) {
      const local = await fetch(file, "push");
      if (typeof local !== "string") return local;
      const pushed = await pushFile(adb, local, to, limit());
      if (!pushed.ok)
        return pushed.deviceLost ? deviceLost(adb.serial, pushed.message) : errored(pushed.message);
      ctx.log("agent", `pushed ${file} to ${to}`);
    }
    return null;
  };

  let coverage: CoverageFiles | null = null;
  if (step.coverage) {
    coverage = new CoverageFiles(ctx.shard?.index ?? 0, step.use_orchestrator === true);
    await adb.shell(`rm -rf ${coverage.leftovers()}`, limit());
  }
  return { apksFirst, pushFiles, coverage };
}
