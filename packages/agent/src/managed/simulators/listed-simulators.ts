/**
 * The simulators `xcrun simctl list devices -j` shows, with what a managed simulator is recognised by: its
 * runtime (the key it is listed under), its device type and its name (testbay-simulator-name.ts). Unlike
 * apple/apple-devices.ts, which describes simulators to offer, this keeps the identifiers.
 */
export interface ListedSimulator {
  udid: string;
  name: string;
  state: string;
  runtime: string;
  deviceTypeIdentifier: string | null;
  isAvailable: boolean;
}

export function parseListedSimulators(json: unknown): ListedSimulator[] {
  const devices = (json as { devices?: unknown } | null)?.devices;
  if (devices === null || typeof devices !== "object") return [];
  return Object.entries(devices as Record<string, unknown>).flatMap(([runtime, list]) =>
    Array.isArray(list)
      ? list.flatMap((d: Record<string, unknown>) =>
          typeof d.udid === "string" && typeof d.name === "string"
            ? [
                {
                  udid: d.udid,
                  name: d.name,
                  state: typeof d.state === "string" ? d.state : "Shutdown",
                  runtime,
                  deviceTypeIdentifier:
                    typeof d.deviceTypeIdentifier === "string" ? d.deviceTypeIdentifier : null,
                  isAvailable: d.isAvailable !== false,
                },
              ]
            : [],
        )
      : [],
  );
}
