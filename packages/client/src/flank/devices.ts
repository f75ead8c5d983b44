import { type ConversionContext, listOf } from "./conversion-context.ts";
import type { FlankDeviceEntry } from "./flank-plan.ts";
import { selectionOfTestLabModel } from "./test-lab-model.ts";

const localePattern = /^[a-z]{2,3}([_-][A-Z]{2})?$/;

/**
 * `gcloud.device` → one device entry each: `model` read as Test Lab means it (test-lab-model.ts: a virtual
 * device is any emulator, a Pixel's codename its model), `version` (an API level) as api_level_min =
 * api_level_max, `locale` and `orientation`. No device: any Android device.
 */
export function devicesOf(context: ConversionContext): FlankDeviceEntry[] {
  const devices = context.gcloud("device");
  const entries = listOf(devices?.value, { commas: false });
  if (!devices || entries.length === 0) return [{ platform: "android" }];
  return entries.map((raw, i) => {
    const entry: FlankDeviceEntry = { platform: "android" };
    const device = (raw ?? {}) as Record<string, unknown>;
    const at = (key: string) => [String(i), key];
    const level = apiLevelOf(device.version);
    if (device.version !== undefined && device.version !== null && level === undefined) {
      context.error(
        devices,
        `gcloud.device[${i}].version ${JSON.stringify(device.version)} is not an Android API level (e.g. 33)`,
        at("version"),
      );
    }
    if (device.model !== undefined && device.model !== null) {
      const written = String(device.model);
      const { model, emulator, instead } = selectionOfTestLabModel(written, level);
      if (model !== undefined) entry.model = model;
      if (emulator) entry.emulator = true;
      if (instead) context.warn(devices, `gcloud.device[${i}].model ${written} ${instead}`, at("model"));
    }
    if (level !== undefined) {
      entry.api_level_min = level;
      entry.api_level_max = level;
    }
    if (device.locale !== undefined && device.locale !== null) {
      const locale = String(device.locale);
      if (localePattern.test(locale)) entry.locale = locale;
      else
        context.error(
          devices,
          `gcloud.device[${i}].locale ${JSON.stringify(locale)} is not a locale like en, fr or en_US`,
          at("locale"),
        );
    }
    const orientation = device.orientation;
    if (orientation === "portrait" || orientation === "landscape") entry.orientation = orientation;
    else if (orientation === "default") {
      context.warn(
        devices,
        `gcloud.device[${i}].orientation default: the device keeps the orientation it has`,
        at("orientation"),
      );
    } else if (orientation !== undefined && orientation !== null) {
      context.error(
        devices,
        `gcloud.device[${i}].orientation ${JSON.stringify(orientation)}: portrait or landscape`,
        at("orientation"),
      );
    }
    return entry;
  });
}

/** Flank's `version` is Test Lab's OS version ID, the API level (`"30"` or `30`). */
function apiLevelOf(version: unknown): number | undefined {
  if (version === undefined || version === null) return undefined;
  const level = Number(version);
  return Number.isInteger(level) && level >= 1 && level <= 1000 ? level : undefined;
}
