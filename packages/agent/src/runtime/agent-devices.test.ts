/**
 * The agent watching its devices, end to end on the agent side: real adb stand-in processes (the device
 * lab, where a test plugs and unplugs devices) and a stand-in for the server's claim endpoint that
 * records every claim and holds it open like the real long poll.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentDevice, AgentJob, ClaimRequest, Testbay } from "@testbay/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createAppleLab } from "../../test/stand-ins/apple-lab.ts";
import { createDeviceLab, type DeviceLab } from "../../test/stand-ins/device-lab.ts";
import { Agent, type AgentOptions } from "./agent.ts";
import type { JobResult } from "./job-runner.ts";

/**
 * How long vi.waitFor waits for what the agent does on its own (its device looks, its claims): Vitest's default
 * second was too short on a loaded CI machine (three more looks of adb had not come yet). A wait, not a limit
 * asserted: the condition usually holds much sooner.
 */
const patience = { timeout: 15_000 };

interface Claim {
  request: ClaimRequest;
  /** How the claim ended: a job, none, or aborted by the agent. */
  ended: Promise<"job" | "none" | "aborted">;
}

/** The claim endpoint: hands out queued jobs whose device is offered, else waits wait_seconds. */
class ClaimDesk {
  readonly claims: Claim[] = [];
  private readonly jobs: AgentJob[] = [];
  private readonly watchers: (() => void)[] = [];
  private readonly parked = new Set<() => void>();

  readonly client = {
    agent: { claim: (request: ClaimRequest, signal?: AbortSignal) => this.claim(request, signal) },
  } as unknown as Testbay;

  queue(job: AgentJob): void {
    this.jobs.push(job);
    for (const wake of [...this.parked]) wake();
  }

  /** The first claim, from the `from`-th on, that satisfies `check`. */
  next(check: (request: ClaimRequest) => boolean, from = 0): Promise<ClaimRequest> {
    return new Promise((resolve) => {
      const look = () => {
        const found = this.claims.slice(from).find((c) => check(c.request));
        if (!found) return false;
        resolve(found.request);
        return true;
      };
      if (!look()) this.watchers.push(() => void look());
    });
  }

  private claim(request: ClaimRequest, signal?: AbortSignal): Promise<AgentJob | undefined> {
    let settle!: (how: "job" | "none" | "aborted") => void;
    const ended = new Promise<"job" | "none" | "aborted">((resolve) => {
      settle = resolve;
    });
    this.claims.push({ request, ended });
    for (const watch of this.watchers) watch();
    return new Promise((resolve, reject) => {
      const offered = new Set(request.devices.map((d) => d.serial));
      const take = () => {
        const at = this.jobs.findIndex((job) => job.device !== null && offered.has(job.device.serial));
        if (at < 0) return false;
        finish();
        settle("job");
        resolve(this.jobs.splice(at, 1)[0]);
        return true;
      };
      const timer = setTimeout(
        () => {
          finish();
          settle("none");
          resolve(undefined);
        },
        (request.wait_seconds ?? 30) * 1000,
      );
      const onAbort = () => {
        finish();
        settle("aborted");
        reject(new DOMException("This operation was aborted", "AbortError"));
      };
      const finish = () => {
        clearTimeout(timer);
        this.parked.delete(wake);
        signal?.removeEventListener("abort", onAbort);
      };
      const wake = () => void take();
      if (take()) return;
      this.parked.add(wake);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (signal?.aborted) onAbort();
    });
  }
}

function jobOn(device: AgentDevice, n: number): AgentJob {
  return {
    lease_id: `lease-${n}`,
    execution_id: `exe-${n}`,
    device_run: { id: `run-${n}`, position: 0, attempt: 1, max_attempts: 1 },
    device,
  } as unknown as AgentJob;
}

const serials = (request: ClaimRequest) => request.devices.map((d) => d.serial);
const SIMULATOR = "6F1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B01";

let lab: DeviceLab;
let dir: string;
let desk: ClaimDesk;
let agent: Agent | undefined;
let logs: string[];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "testbay-agent-devices-"));
  lab = await createDeviceLab({ devices: [{ serial: "emulator-5554", model: "Pixel 7", release: "14" }] });
  desk = new ClaimDesk();
  logs = [];
});

afterEach(async () => {
  await agent?.stop(0);
  agent = undefined;
  lab.cleanup();
  await rm(dir, { recursive: true, force: true });
});

async function startAgent(extra: Partial<AgentOptions> = {}): Promise<Agent> {
  agent = new Agent({
    client: desk.client,
    name: "lab-agent",
    allowShell: false,
    devices: "auto",
    concurrency: 1,
    workRoot: dir,
    cacheDir: join(dir, "cache"),
    log: (line) => logs.push(line),
    // Long enough that only the agent's own abort can end a claim within a test's time.
    claimWaitSeconds: 30,
    deviceRefreshMs: 50,
    env: { ...process.env, ...lab.env },
    ...extra,
  });
  await agent.start();
  return agent;
}

describe("an agent watching its devices", () => {
  it("offers a device plugged in after start, stops offering it once unplugged, and reads it once", async () => {
    await startAgent();
    const first = await desk.next(() => true);
    // With API.md §13's facts: read with the same getprop; a device the agent found is not managed.
    expect(first.devices).toEqual([
      {
        serial: "emulator-5554",
        platform: "android",
        model: "Pixel 7",
        os_version: "14",
        api_level: 34,
        abi: "x86_64",
        emulator: true,
        managed: false,
        labels: {},
        state: "idle",
      },
    ]);
    expect(first.step_types).toContain("instrumentation");

    const plugged = performance.now();
    lab.plug({ serial: "emulator-5556", model: "Pixel 8 Pro", release: "15" });
    const both = await desk.next((r) => serials(r).includes("emulator-5556"));
    // The claim open at that moment was ended by the agent, not left to run its 30 s.
    expect(performance.now() - plugged).toBeLessThan(10_000);
    expect(await desk.claims[0]?.ended).toBe("aborted");
    // The claim given up on is named in the next one, in case the server granted it as the agent hung up.
    expect(first.claim_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(both.claim_id).not.toBe(first.claim_id);
    expect(both.abandoned_claims).toContain(first.claim_id);
    expect(first.abandoned_claims).toBeUndefined();
    expect(both.devices).toContainEqual(
      expect.objectContaining({
        serial: "emulator-5556",
        platform: "android",
        model: "Pixel 8 Pro",
        os_version: "15",
        state: "idle",
      }),
    );
    expect(logs).toContain("device emulator-5556 (Pixel 8 Pro, Android 15) connected");

    lab.unplug("emulator-5554");
    const afterUnplug = await desk.next((r) => !serials(r).includes("emulator-5554"));
    expect(serials(afterUnplug)).toEqual(["emulator-5556"]);
    expect(logs).toContain("device emulator-5554 (Pixel 7, Android 14) disconnected");

    lab.unplug("emulator-5556");
    const none = await desk.next((r) => r.devices.length === 0);
    expect(none.step_types).not.toContain("instrumentation");
    expect(logs.some((l) => l.startsWith("step types now ") && !l.includes("instrumentation"))).toBe(true);

    lab.plug({ serial: "emulator-5556", model: "Pixel 8 Pro", release: "15" });
    const noneAt = desk.claims.findIndex((c) => c.request === none);
    const back = await desk.next((r) => r.devices.length === 1, noneAt);
    expect(back.step_types).toContain("instrumentation");

    // Dozens of looks at `adb devices`, but one getprop per appearance: 5554 once, 5556 twice.
    const calls = lab.calls().map((c) => c.argv.join(" "));
    expect(calls.filter((c) => c === "devices -l").length).toBeGreaterThan(4);
    expect(calls.filter((c) => c.endsWith("shell getprop")).sort()).toEqual([
      "-s emulator-5554 shell getprop",
      "-s emulator-5556 shell getprop",
      "-s emulator-5556 shell getprop",
    ]);
  });

  it("drains a device after three device_lost runs in a row and reports it in every claim after", async () => {
    // An emulator, whose real model has underscores that must reach the server as they are.
    const emulator = {
      serial: "emulator-5554",
      platform: "android",
      model: "sdk_gphone64_x86_64",
      os_version: "14",
    };
    lab.unplug("emulator-5554");
    lab.plug({ serial: "emulator-5554", model: "sdk_gphone64_x86_64", release: "14" });
    const results: JobResult[] = [];
    await startAgent({
      runJob: async () => ({ status: "errored", reason: "device_lost" }),
      onJobDone: (_, result) => results.push(result),
    });
    expect((await desk.next(() => true)).devices).toEqual([
      expect.objectContaining({ ...emulator, state: "idle" }),
    ]);
    for (let n = 1; n <= 4; n++) desk.queue(jobOn(emulator as AgentDevice, n));
    const drained = await desk.next((r) => (r.drained_devices ?? []).length > 0);
    expect(results).toHaveLength(3);
    expect(drained.devices).toEqual([]);
    expect(drained.drained_devices).toEqual([
      {
        ...emulator,
        managed: false,
        labels: {},
        state: "drained",
        error:
          "3 infrastructure failures in a row (the device was lost mid-run); restart the agent to offer it again",
      },
    ]);
    expect(drained.step_types).not.toContain("instrumentation");
    expect(logs.filter((l) => l.includes("drained after 3 infrastructure failures in a row"))).toEqual([
      "device emulator-5554 drained after 3 infrastructure failures in a row; restart the agent to offer it again",
    ]);
    // Before the drain, the device was offered and no claim said drained.
    const firstDrained = desk.claims.findIndex((c) => (c.request.drained_devices ?? []).length > 0);
    expect(desk.claims.slice(0, firstDrained).every((c) => c.request.drained_devices === undefined)).toBe(
      true,
    );

    // Still drained after the device is unplugged and plugged back: only a restart clears it.
    const beforeReplug = desk.claims.length;
    lab.unplug("emulator-5554");
    lab.plug({ serial: "emulator-5554", model: "sdk_gphone64_x86_64", release: "14" });
    const later = await desk.next(
      () =>
        logs.includes(
          "device emulator-5554 (sdk_gphone64_x86_64, Android 14) connected; drained, not offered until the agent restarts",
        ),
      beforeReplug,
    );
    expect(later.devices).toEqual([]);
    expect(later.drained_devices?.map((d) => d.serial)).toEqual(["emulator-5554"]);
    expect(results).toHaveLength(3);
  });

  it("runs one job per device by default (concurrency: devices), with a worker more for a device plugged in", async () => {
    const running = new Set<string>();
    let most = 0;
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    await startAgent({
      concurrency: "devices",
      runJob: async (job) => {
        running.add(job.lease_id);
        most = Math.max(most, running.size);
        await released;
        running.delete(job.lease_id);
        return { status: "passed", reason: null };
      },
    });
    const pixel7 = { serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" };
    const pixel8 = { serial: "emulator-5556", platform: "android", model: "Pixel 8 Pro", os_version: "15" };
    desk.queue(jobOn(pixel7 as AgentDevice, 1));
    await vi.waitFor(() => expect(running.has("lease-1")).toBe(true), patience);
    expect(logs.some((l) => l.endsWith("; 1 at a time (one per device)"))).toBe(true);

    lab.plug({ serial: "emulator-5556", model: "Pixel 8 Pro", release: "15" });
    await desk.next((r) => serials(r).includes("emulator-5556"));
    desk.queue(jobOn(pixel8 as AgentDevice, 2));
    // The first device's job still runs: only a second worker can have taken this one.
    await vi.waitFor(() => expect(running.has("lease-2")).toBe(true), patience);
    expect(most).toBe(2);
    expect(logs).toContain("2 at a time (one per device)");
    release();
  });

  it("offers the simulators while adb cannot start its server, keeps a device adb found before, and says each once", async () => {
    const apple = await createAppleLab({
      simulators: [
        { udid: SIMULATOR, name: "iPhone 15", runtime: "com.apple.CoreSimulator.SimRuntime.iOS-17-5" },
      ],
    });
    try {
      const env = { ...process.env, ...lab.env, ...apple.env, PATH: apple.env.PATH };
      lab.breakServer();
      await startAgent({ env });
      const first = await desk.next(() => true);
      expect(serials(first)).toEqual([SIMULATOR]);
      expect(logs).toContain(
        "cannot list Android devices (adb devices -l failed: adb: failed to check server version: cannot connect to daemon); none offered until adb answers",
      );
      expect(
        logs.some((l) => l.includes("devices 6F1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B01 (iPhone 15, iOS 17.5)")),
      ).toBe(true);

      lab.mendServer();
      await desk.next((r) => serials(r).includes("emulator-5554"));
      expect(logs).toContain("adb lists Android devices again");

      // Broken again after a look that found the emulator: it is kept and still offered, the line says so once.
      const before = desk.claims.length;
      lab.breakServer();
      await vi.waitFor(
        () =>
          expect(logs).toContain(
            "cannot list Android devices (adb devices -l failed: adb: failed to check server version: cannot connect to daemon); still offering the last known: emulator-5554 (Pixel 7, Android 14)",
          ),
        patience,
      );
      const looks = () => lab.calls().filter((c) => c.argv.join(" ") === "devices -l").length;
      const brokenLooks = looks();
      await vi.waitFor(() => expect(looks()).toBeGreaterThan(brokenLooks + 2), patience);
      expect(logs.filter((l) => l.startsWith("cannot list Android devices"))).toHaveLength(2);
      expect(desk.claims.slice(before).every((c) => serials(c.request).includes("emulator-5554"))).toBe(true);
    } finally {
      await agent?.stop(0);
      agent = undefined;
      apple.cleanup();
    }
  });

  it("stops looking at devices when stopped, leaving no timer behind", async () => {
    // Timers faked (adb still runs for real) so what is left pending after stop() can be counted exactly.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
    try {
      const running = await startAgent();
      await desk.next(() => true);
      expect(vi.getTimerCount()).toBe(2); // the next look at the devices, and the claim's long poll
      await running.stop(0);
      agent = undefined;
      expect(await desk.claims[0]?.ended).toBe("aborted");
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
