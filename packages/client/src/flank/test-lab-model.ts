import { testLabPhysicalModels, testLabVirtualModels } from "./test-lab-catalog.ts";

/** What a device entry selects for a flank file's `model`, and why, when Testbay reads it differently. */
export interface ModelSelection {
  /** The model the device must report (adb's ro.product.model), or none. */
  model?: string;
  /** true: any emulator, for a Test Lab virtual device. */
  emulator?: true;
  /** What Testbay does with the written ID, for the warning line; none when the model is taken as it is. */
  instead?: string;
}

const reportedModels = new Set(Object.values(testLabPhysicalModels));

/**
 * Reads `gcloud.device[].model` as Test Lab means it, so a team's file runs unchanged: a virtual device ID
 * (MediumPhone.arm, NexusLowRes, Pixel2) is any emulator of that API level, a Pixel's codename (redfin,
 * oriole) is the model that phone reports, and anything else must be a model the device hosts report
 * (test-lab-catalog.ts says where each fact comes from).
 */
export function selectionOfTestLabModel(written: string, apiLevel: number | undefined): ModelSelection {
  if (testLabVirtualModels.has(written)) {
    const level = apiLevel === undefined ? "" : ` of API ${apiLevel}`;
    return { emulator: true, instead: `is a Test Lab virtual device: any emulator${level}` };
  }
  if (Object.hasOwn(testLabPhysicalModels, written)) {
    const reported = testLabPhysicalModels[written] as string;
    return {
      model: reported,
      instead: `is Test Lab's ${reported}: a device whose model is ${JSON.stringify(reported)}`,
    };
  }
  if (reportedModels.has(written)) return { model: written };
  return {
    model: written,
    instead:
      "is kept as written: it must equal the model a device host reports for the phone (testbay agents lists them)",
  };
}
