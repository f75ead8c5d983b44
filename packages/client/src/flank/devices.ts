import { type ConversionContext, listOf } from "./conversion-context.ts";
import type { FlankDeviceEntry } from "./flank-plan.ts";

const localePattern = /^[a-z]{2,3}([_-][A-Z]{2})?$/;

/**
 * `gcloud.device` → one device entry each: `model` as it is, `version` (an API level) as api_level_min =
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
    if (device.model !== undefined && device.model !== null) entry.model = String(device.model);
    if (device.version !== undefined && device.version !== null) {
      const level = Number(device.version);
      if (Number.isInteger(level) && level >= 1 && level <= 1000) {
        entry.api_level_min = level;
        entry.api_level_max = level;
      } else {
        context.error(
          devices,
          `gcloud.device[${i}].version ${JSON.stringify(device.version)} is not an Android API level (e.g. 33)`,
          at("version"),
        );
      }
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
