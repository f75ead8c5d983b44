import type { AgentDevice, AgentJob, Testbay } from "@testbay/client";
import { discoverDevices } from "../devices/discover-devices.ts";
import { detectTools, runnableStepTypes } from "../steps/capabilities.ts";
import type { Device } from "../steps/step-types.ts";
import { BinaryCache } from "./binary-cache.ts";
import { type JobResult, runJob } from "./job-runner.ts";

export interface AgentOptions {
  client: Testbay;
  /** Shown on runs as agent_id. */
  name: string;
  /** Shell steps run arbitrary commands on this host: only when its operator says so. */
  allowShell: boolean;
  /** `auto`: look for Android devices with adb; `none`: run device-less plans only. */
  devices: "auto" | "none";
  /** Jobs at once (a device runs one job at a time; host runs need no device). */
  concurrency: number;
  workRoot: string;
  cacheDir: string;
  log: (message: string) => void;
  /** Long-poll length of each claim, in seconds (≤ 30). */
  claimWaitSeconds?: number;
  /** Called after each job: for tests and for operators' logs. */
  onJobDone?: (job: AgentJob, result: JobResult) => void;
}

/** adb prints models with underscores (model:Pixel_7); plans name them as people do ("Pixel 7"). */
export function claimDevice(device: Device): AgentDevice {
  return { ...device, model: device.model.replaceAll("_", " ") };
}

/**
 * The agent loop: `concurrency` workers, each claiming (long poll) the next job it can do with the
 * devices free at that moment, running it, and claiming again. `stop()` ends claiming at once, lets
 * running jobs finish within a grace period, then hands the rest back to the server.
 */
export class Agent {
  private readonly stopClaiming = new AbortController();
  private readonly shutdown = new AbortController();
  private readonly busySerials = new Set<string>();
  private workers: Promise<void>[] = [];
  private devices: Device[] = [];
  private stepTypes: string[] = ["inspect"];
  readonly cache: BinaryCache;

  constructor(private readonly options: AgentOptions) {
    this.cache = new BinaryCache(options.cacheDir);
  }

  /** Looks at the host (devices, tools), then starts the workers. */
  async start(): Promise<void> {
    const { log } = this.options;
    if (this.options.devices === "auto") {
      const found = await discoverDevices();
      this.devices = found.devices;
      if (found.reason) log(`no Android devices: ${found.reason}`);
    }
    const tools = await detectTools();
    this.stepTypes = [
      ...runnableStepTypes({ allowShell: this.options.allowShell, ...tools, devices: this.devices }),
    ].sort();
    log(
      `agent ${this.options.name}: step types ${this.stepTypes.join(", ")}; devices ${
        this.devices.map((d) => `${d.serial} (${d.model}, Android ${d.os_version})`).join(", ") || "none"
      }; ${this.options.concurrency} at a time`,
    );
    this.workers = Array.from({ length: this.options.concurrency }, (_, i) => this.work(i));
  }

  /**
   * Stops claiming, waits up to `graceMs` for running jobs, then stops the rest: they are completed as
   * errored with reason agent_shutdown, which puts their runs back in the queue for another agent.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopClaiming.abort();
    const grace = setTimeout(() => this.shutdown.abort(), graceMs);
    try {
      await Promise.all(this.workers);
    } finally {
      clearTimeout(grace);
    }
  }

  private async work(worker: number): Promise<void> {
    const { client, log } = this.options;
    let failures = 0;
    while (!this.stopClaiming.signal.aborted) {
      const free = this.devices.filter((d) => !this.busySerials.has(d.serial));
      let job: AgentJob | undefined;
      const claimedAt = performance.now();
      try {
        job = await client.agent.claim(
          {
            agent_id: this.options.name,
            devices: free.map(claimDevice),
            host: true,
            step_types: this.stepTypes as NonNullable<Parameters<typeof client.agent.claim>[0]["step_types"]>,
            wait_seconds: this.options.claimWaitSeconds ?? 30,
          },
          this.stopClaiming.signal,
        );
        failures = 0;
      } catch (error) {
        if (this.stopClaiming.signal.aborted) return;
        failures++;
        const waitMs = Math.min(30_000, 1000 * 2 ** Math.min(failures, 5));
        log(
          `worker ${worker}: claim failed (${(error as Error).message}); trying again in ${waitMs / 1000} s`,
        );
        await pause(waitMs, this.stopClaiming.signal);
        continue;
      }
      if (!job) {
        // A server that is shutting down answers at once: do not spin on it.
        if (performance.now() - claimedAt < 1000) await pause(1000, this.stopClaiming.signal);
        continue;
      }
      const serial = job.device?.serial;
      if (serial) this.busySerials.add(serial);
      try {
        log(
          `worker ${worker}: running ${job.execution_id} (attempt ${job.device_run.attempt}) on ${serial ?? "host"}`,
        );
        const result = await runJob(job, {
          client,
          cache: this.cache,
          workRoot: this.options.workRoot,
          log,
          shutdown: this.shutdown.signal,
        });
        log(
          `worker ${worker}: ${job.execution_id} ended ${result.status}${result.reason ? ` (${result.reason})` : ""}`,
        );
        this.options.onJobDone?.(job, result);
      } catch (error) {
        log(
          `worker ${worker}: job ${job.execution_id} failed in the agent: ${(error as Error).stack ?? error}`,
        );
      } finally {
        if (serial) this.busySerials.delete(serial);
      }
    }
  }
}

/** Waits `ms`, or less if `signal` fires first. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
