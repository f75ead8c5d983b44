/**
 * Reads `adb shell getprop` (every property, one per line: "[key]: [value]") into what the agent offers
 * for a device. Values may be empty, hold spaces, commas, colons and even "]": the key never holds "]",
 * so a line is split at its first "]: [" and the value runs to the line's last "]".
 */

export type DeviceProps = ReadonlyMap<string, string>;

const LINE = /^\[([^\]]*)\]: \[(.*)\]$/;

export function parseGetprop(output: string): Map<string, string> {
  const props = new Map<string, string>();
  // Devices before Android 7 answer through a PTY, which ends lines with "\r\n".
  for (const raw of output.split("\n")) {
    const match = LINE.exec(raw.replace(/\r$/, ""));
    if (match) props.set(match[1] as string, match[2] as string);
  }
  return props;
}

export interface DeviceFacts {
  /** As a person writes it in a plan: "Pixel 8 Pro". */
  model: string;
  /** The Android release: "14", "8.1.0". */
  os_version: string;
  /** Where the model came from: getprop, or adb's `model:` attribute when getprop gave nothing. */
  modelFrom: "getprop" | "adb";
  /** ro.build.version.sdk (API.md §13 `api_level`); null when not read. */
  api_level: number | null;
  /** ro.product.cpu.abi; null when not read. */
  abi: string | null;
  /** The emulator sets ro.kernel.qemu (ro.boot.qemu from API 30 on); a phone sets neither. */
  emulator: boolean;
}

/** API level, ABI and whether it is an emulator, from the same getprop dump. */
function hardwareFacts(props: DeviceProps | null): Pick<DeviceFacts, "api_level" | "abi" | "emulator"> {
  const sdk = Number(props?.get("ro.build.version.sdk")?.trim());
  return {
    api_level: Number.isInteger(sdk) && sdk > 0 ? sdk : null,
    abi: props?.get("ro.product.cpu.abi")?.trim() || null,
    emulator: props?.get("ro.kernel.qemu") === "1" || props?.get("ro.boot.qemu") === "1",
  };
}

/**
 * The model and release of a device from its properties; `props` null when getprop failed. adb's own
 * `model:` attribute is the same property with every character outside [A-Za-z0-9._-] turned into "_",
 * so it is the fallback, with underscores read back as the spaces they most often were.
 */
export function deviceFacts(props: DeviceProps | null, adbModel: string | undefined): DeviceFacts {
  const model = props?.get("ro.product.model")?.trim();
  const release = props?.get("ro.build.version.release")?.trim();
  if (model)
    return { model, os_version: release || "unknown", modelFrom: "getprop", ...hardwareFacts(props) };
  return {
    model: adbModel ? adbModel.replaceAll("_", " ") : "unknown",
    os_version: release || "unknown",
    modelFrom: "adb",
    ...hardwareFacts(props),
  };
}
