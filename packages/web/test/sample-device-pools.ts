// Agents with device pools (API.md §13) for the agents page to show: managed emulators in each state a pool goes
// through (idle, resetting, booting, failed with the emulator's last words), a plugged-in phone drained after
// failed runs, and a Mac's managed simulators. Made through the API as agents describe their devices in claims.
// Used by scripts/screenshots.ts (its seed) and test/agents-pools.int.test.ts.
import { call, type TestServer } from "../../server/test/harness.ts";
import { organization } from "./sample-data.ts";

const emulator = (port: number, state: string, more: Record<string, unknown> = {}) => ({
  serial: `emulator-${port}`,
  platform: "android",
  model: "sdk_gphone64_x86_64",
  os_version: "14",
  api_level: 34,
  abi: "x86_64",
  emulator: true,
  managed: true,
  pool: "Pixel_7_API_34",
  labels: { gpu: "swiftshader" },
  state,
  error: null,
  ...more,
});

export const devicePoolAgents = {
  "lab-linux-emulators": [
    // Booted from the clean snapshot (a few seconds), and one cold boot after a crash.
    emulator(5554, "idle", { boot_ms: 7_400 }),
    emulator(5556, "resetting", { boot_ms: 41_800 }),
    emulator(5558, "booting"),
    emulator(5560, "failed", {
      error:
        "emulator: ERROR: x86_64 emulation currently requires hardware acceleration!\nCPU acceleration status: /dev/kvm is not found: VT disabled in BIOS or KVM kernel module not loaded",
    }),
    {
      serial: "R5CT21ABCDE",
      platform: "android",
      model: "SM-S911B",
      os_version: "14",
      api_level: 34,
      abi: "arm64-v8a",
      emulator: false,
      managed: false,
      labels: { room: "b2", carrier: "none" },
      state: "drained",
      error: "three runs in a row lost the device: adb: device offline",
    },
  ],
  "lab-mac-simulators": [1, 2].map((n) => ({
    serial: `5A1C0F3E-0000-4000-8000-00000000000${n}`,
    platform: "ios",
    model: "iPhone 15",
    os_version: "17.5",
    emulator: true,
    managed: true,
    pool: "iPhone 15@17.5",
    labels: {},
    state: "idle",
    boot_ms: 18_000 + 1_500 * n,
  })),
} as const;

/**
 * Each agent claims once with its devices (long poll 0): the server stores what it says of them. Call it when no
 * device run is queued that these devices could take (it throws if one was handed out).
 */
export async function seedDevicePools(server: TestServer): Promise<void> {
  const agent = { "x-api-key": await server.token(await server.createClient(organization, "agent")) };
  for (const [agentId, devices] of Object.entries(devicePoolAgents)) {
    const claimed = await call(`${server.baseUrl}/agent/claim`, {
      headers: agent,
      json: {
        agent_id: agentId,
        devices,
        host: false,
        step_types: devices[0]?.platform === "ios" ? ["xcuitest", "maestro"] : ["instrumentation", "maestro"],
      },
    });
    if (claimed.status !== 204) {
      throw new Error(
        `seeding ${agentId}: expected no job (204), got ${claimed.status} ${JSON.stringify(claimed.body)}`,
      );
    }
  }
}
