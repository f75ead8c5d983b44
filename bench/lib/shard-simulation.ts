/**
 * A model of a sharded run, to choose how to cut a suite before real agents run it: given each test's
 * duration on a reference device, the devices' speeds, what each runner start costs, and a plan (exact lists
 * per device, or a queue of batches every device takes from), when does the last device finish?
 *
 * What it leaves out: the claim and upload round trips (the claim benchmark's), a device that drains
 * mid-run, tests whose duration depends on which device or batch they run in.
 */

/** Exact lists, list i on device i (`uniform` sharding), or one queue all devices take from in order. */
export type ShardPlanModel =
  | { kind: "lists"; lists: readonly (readonly string[])[] }
  | { kind: "queue"; batches: readonly (readonly string[])[] };

export interface SimulatedDevice {
  /** Busy time, runner starts included, in ms. */
  busyMs: number;
  batches: number;
  tests: number;
}

export interface Simulation {
  /** When the last device finished, in ms from the start. */
  wallMs: number;
  devices: SimulatedDevice[];
}

/**
 * @param durationsMs each test's duration on a device of speed 1, by test id
 * @param speeds one per device: 1 is the reference, 0.5 a device that takes twice as long for everything
 *   (its tests and its runner starts)
 * @param batchOverheadMs what starting the runner for one list or batch costs on a device of speed 1
 */
export function simulate(
  plan: ShardPlanModel,
  durationsMs: ReadonlyMap<string, number>,
  speeds: readonly number[],
  batchOverheadMs: number,
): Simulation {
  if (speeds.length === 0 || speeds.some((speed) => !(speed > 0))) {
    throw new RangeError(`every device needs a speed > 0, got [${speeds.join(", ")}]`);
  }
  const devices: SimulatedDevice[] = speeds.map(() => ({ busyMs: 0, batches: 0, tests: 0 }));
  const run = (device: number, tests: readonly string[]) => {
    const state = devices[device] as SimulatedDevice;
    const referenceMs = tests.reduce((sum, id) => sum + durationOf(durationsMs, id), batchOverheadMs);
    state.busyMs += referenceMs / (speeds[device] as number);
    state.batches++;
    state.tests += tests.length;
  };

  if (plan.kind === "lists") {
    if (plan.lists.length !== speeds.length) {
      throw new RangeError(`${plan.lists.length} lists for ${speeds.length} devices`);
    }
    // A device with an empty list has nothing to start.
    plan.lists.forEach((list, device) => {
      if (list.length > 0) run(device, list);
    });
  } else {
    // The device that is free first takes the next batch; on a tie, the lower index (deterministic).
    for (const batch of plan.batches) {
      let next = 0;
      for (let device = 1; device < devices.length; device++) {
        if ((devices[device] as SimulatedDevice).busyMs < (devices[next] as SimulatedDevice).busyMs) {
          next = device;
        }
      }
      run(next, batch);
    }
  }
  return { wallMs: Math.max(...devices.map((device) => device.busyMs)), devices };
}

/**
 * The best any plan could do, overheads aside: the work spread in proportion to speed, or the longest test
 * on the fastest device if that is longer. With equal devices this is max(Σ durations ÷ N, longest test);
 * with one device at half speed, Σ ÷ (N − 0.5): the slow device is counted as half a device, since that is
 * what it can take off the others.
 */
export function idealMs(durationsMs: ReadonlyMap<string, number>, speeds: readonly number[]): number {
  const durations = [...durationsMs.values()];
  const total = durations.reduce((sum, ms) => sum + ms, 0);
  const capacity = speeds.reduce((sum, speed) => sum + speed, 0);
  return Math.max(total / capacity, Math.max(0, ...durations) / Math.max(...speeds));
}

function durationOf(durationsMs: ReadonlyMap<string, number>, id: string): number {
  const ms = durationsMs.get(id);
  if (ms === undefined) throw new Error(`the plan names ${JSON.stringify(id)}, which has no duration`);
  return ms;
}
