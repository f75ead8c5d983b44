// One managed simulator's restart policy on a scripted simctl and a clock the test moves (API.md §13: restarted
// when it does not boot or loses three runs in a row, at most three restarts in any hour,
// then failed with simctl's last lines). The real simctl's texts and states are the stand-in's, exercised in
// managed-simulators.stand-ins.test.ts; here only the decisions are.
import { describe, expect, it } from "vitest";
import type { ToolResult } from "../../apple/xcrun.ts";
import type { ListedSimulator } from "./listed-simulators.ts";
import { ManagedSimulator, type SimulatorHost } from "./managed-simulator.ts";
import { parseDeviceTypes, parseRuntimes, resolveSimulatorSpec } from "./simulator-catalog.ts";
import { parseSimulatorSpec } from "./simulator-spec.ts";

const UDID = "11111111-2222-4333-8444-555555555555";
const HOUR = 3_600_000;
const RESOLVED = resolveSimulatorSpec(
  parseSimulatorSpec("iPhone 15@17.4"),
  parseDeviceTypes({
    devicetypes: [{ name: "iPhone 15", identifier: "com.apple.CoreSimulator.SimDeviceType.iPhone-15" }],
  }),
  parseRuntimes({
    runtimes: [
      { identifier: "com.apple.CoreSimulator.SimRuntime.iOS-17-4", version: "17.4", platform: "iOS" },
    ],
  }),
);

const result = (exitCode: number, stderr: string[] = [], stdout: string[] = []): ToolResult => ({
  exitCode,
  signal: null,
  timedOut: false,
  aborted: false,
  spawnError: null,
  stdout,
  stderr,
  ok: exitCode === 0,
});

/** A simctl that keeps one simulator's state; `boots` says, boot by boot, whether it comes up. */
function scriptedHost(boots: () => boolean) {
  const state = { clock: 0, exists: false, booted: false, bootAttempts: 0, commands: [] as string[] };
  const log: string[] = [];
  const host: SimulatorHost = {
    async simctl(args) {
      state.commands.push(args[0] as string);
      state.clock += 1_000;
      switch (args[0]) {
        case "create":
          state.exists = true;
          return result(0, [], [UDID]);
        case "shutdown":
          if (!state.booted) return result(149, ["Unable to shutdown device in current state: Shutdown"]);
          state.booted = false;
          return result(0);
        case "erase":
          return result(0);
        case "boot":
          state.bootAttempts++;
          if (!boots()) return result(60, ["Unable to boot the Simulator.", "launchd failed to respond."]);
          state.booted = true;
          return result(0);
        default:
          return result(0);
      }
    },
    async list(): Promise<ListedSimulator[]> {
      return state.exists
        ? [
            {
              udid: UDID,
              name: "testbay iPhone 15 17.4 #1",
              state: state.booted ? "Booted" : "Shutdown",
              runtime: RESOLVED.runtime.identifier,
              deviceTypeIdentifier: RESOLVED.deviceType.identifier,
              isAvailable: true,
            },
          ]
        : [];
    },
    now: () => state.clock,
    log: (m) => log.push(m),
    changed: () => undefined,
  };
  return { host, state, log, simulator: new ManagedSimulator(RESOLVED, 1, null, host) };
}

describe("ManagedSimulator", () => {
  it("launches clean: created, erased, booted and waited for, then idle", async () => {
    const { simulator, state } = scriptedHost(() => true);
    await simulator.launch();
    expect(state.commands).toEqual(["create", "erase", "boot", "bootstatus"]);
    expect(simulator.device()).toMatchObject({
      serial: UDID,
      state: "idle",
      pool: "iPhone 15@17.4",
      error: null,
    });
  });

  it("gives one that never boots four launches, then lists it failed with simctl's last lines", async () => {
    const { simulator, state } = scriptedHost(() => false);
    await simulator.launch();
    expect(state.bootAttempts).toBe(4);
    expect(simulator.device()).toMatchObject({
      state: "failed",
      error:
        "xcrun simctl boot failed (exit code 60):\nUnable to boot the Simulator.\nlaunchd failed to respond.",
    });
    // Failed is final: a reset does nothing and costs nothing.
    expect(await simulator.reset()).toEqual({ setupMs: 0 });
    expect(state.bootAttempts).toBe(4);
  });

  /** A simulator whose reset boots fail once, `apart` ms apart, `times` times: what becomes of it. */
  async function failingOnceEvery(apart: number, times: number) {
    let failNext = false;
    const { simulator, state } = scriptedHost(() => {
      const up = !failNext;
      failNext = false;
      return up;
    });
    await simulator.launch();
    const after: string[] = [];
    for (let i = 0; i < times; i++) {
      state.clock += apart;
      failNext = true; // the reset's boot fails once: one restart mends it
      await simulator.reset();
      after.push(simulator.current);
    }
    return { after, bootAttempts: state.bootAttempts };
  }

  it("has four launches within an hour: three restarts ten minutes apart mend it, a fourth fails it", async () => {
    const { after, bootAttempts } = await failingOnceEvery(10 * 60_000, 4);
    expect(after).toEqual(["idle", "idle", "idle", "failed"]);
    // The first launch, then per reset the failed boot and the restart's boot, then the last failed boot.
    expect(bootAttempts).toBe(1 + 3 * 2 + 1);
  });

  it("mends one that gives way once a day, every day: the hour is a rolling one", async () => {
    const { after } = await failingOnceEvery(24 * HOUR, 6);
    expect(after).toEqual(["idle", "idle", "idle", "idle", "idle", "idle"]);
  });

  it("restarts one that lost three runs in a row, not one whose lost runs were broken by a good one", async () => {
    const { simulator, log } = scriptedHost(() => true);
    await simulator.launch();
    const lost = async (ok: boolean) => {
      simulator.runFinished(ok);
      await simulator.reset();
    };
    await lost(false);
    await lost(false);
    await lost(true);
    await lost(false);
    await lost(false);
    expect(log.filter((l) => l.includes("restarting"))).toEqual([]);
    await lost(false);
    expect(log.filter((l) => l.includes("restarting"))).toEqual([
      'simulator "testbay iPhone 15 17.4 #1" (11111111-2222-4333-8444-555555555555): restarting (launch 2; at most 3 restarts an hour): it lost 3 runs in a row',
    ]);
    expect(simulator.current).toBe("idle");
  });

  it("is resetting from the moment a reset is asked for, and says what the reset took", async () => {
    const { simulator } = scriptedHost(() => true);
    await simulator.launch();
    const reset = simulator.reset();
    expect(simulator.current).toBe("resetting");
    // shutdown, erase, boot and bootstatus: one second each on the scripted clock.
    expect(await reset).toEqual({ setupMs: 4_000 });
    expect(simulator.current).toBe("idle");
  });
});
