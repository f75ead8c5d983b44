import { randomUUID } from "node:crypto";
import { type AgentDevice, type AgentJob, type Testbay, TestbayApiError } from "@testbay/client";
import type { AppiumOffer } from "../appium/appium-offer.ts";
import { stopAllAppiumServers } from "../appium/appium-server.ts";
import { AppiumSessionRegistry } from "../appium/session-registry.ts";
import { ChannelClient } from "../channel/channel-client.ts";
import { DeviceTracker, type RefreshResult } from "../devices/device-tracker.ts";
import {
  describeDevice,
  type FoundDevice,
  listReadyDevices,
  PLATFORM_NAMES,
  type Platform,
  type Unlisted,
} from "../devices/discover-devices.ts";
import type { ManagedDevice, ManagedDevicePool } from "../managed/managed-device-pool.ts";
import { detectTools, runnableStepTypes } from "../steps/capabilities.ts";
import type { Device } from "../steps/step-types.ts";
import { BinaryCache } from "./binary-cache.ts";
import { deviceFactsRefused, withDeviceFacts } from "./device-facts.ts";
import { DEVICE_LOST, DeviceHealth, DRAIN_AFTER } from "./device-health.ts";
import { rememberDeviceSettings } from "./device-settings-after-run.ts";
import { type JobResult, runJob } from "./job-runner.ts";
import type { AppiumJobServices } from "./job-runner-options.ts";
import { pause } from "./pause.ts";
import { uninstallAfterRun } from "./uninstall-after-run.ts";

export interface AgentOptions {
  client: Testbay;
  /** Shown on runs as agent_id. */
  name: string;
  /** Shell steps run arbitrary commands on this host: only when its operator says so. */
  allowShell: boolean;
  /** `auto`: look for Android devices with adb and iOS ones with xcrun; `none`: run device-less plans only. */
  devices: "auto" | "none";
  /**
   * Jobs at once (a device runs one job at a time; host runs need no device). `devices`: one per device
   * found (at least one), and one more whenever a device is plugged in beyond that: a host with three phones
   * runs three shards at once without being told.
   */
  concurrency: number | "devices";
  workRoot: string;
  cacheDir: string;
  /**
   * `--android-tools DIR`: the AndroidX Test Orchestrator and test-services APKs an instrumentation step with
   * use_orchestrator installs (API.md §14; android/android-tools.ts finds them). Null: none.
   */
  androidTools?: string | null;
  log: (message: string) => void;
  /** Long-poll length of each claim, in seconds (≤ 30). */
  claimWaitSeconds?: number;
  /** How often to look for devices plugged in or unplugged (`adb devices -l`), in ms; 5000 by default. */
  deviceRefreshMs?: number;
  /**
   * Where the agent looks for adb and maestro when it lists devices and decides its step types (PATH);
   * its own environment by default. The steps of a job run with the agent's own environment.
   */
  env?: NodeJS.ProcessEnv;
  /** Runs one claimed job; the real job runner unless a test puts a stand-in here. */
  runJob?: typeof runJob;
  /** Called after each job: for tests and for operators' logs. */
  onJobDone?: (job: AgentJob, result: JobResult) => void;
  /**
   * Called once when the server refuses this client for good: a claim answered 403 (the credentials are no
   * agent's any more), or the token endpoint answered 401 (the secret was rotated or the client disabled).
   * No retry mends either. Claiming has stopped by then; the caller says why and calls stop().
   */
  onForbidden?: (error: TestbayApiError) => void;
  /**
   * What `--appium` found (src/appium/appium-offer.ts): the agent then offers step type `appium` (WebDriver
   * sessions, API.md §12) and keeps its channel to the server open for their commands.
   */
  appium?: AppiumOffer;
  /**
   * Devices the agent starts and looks after itself (`--emulator`, `--simulator`: API.md §13). Their devices are
   * offered once idle, reset after every run, and stopped with the agent.
   */
  managed?: ManagedDevicePool[];
  /** `--label KEY=VALUE`: every device of this agent carries them (API.md §13 `labels`). */
  labels?: Record<string, string>;
  /** A pool could not start at all (an unknown AVD, no emulator on PATH): the operator's to mend. */
  onManagedRefused?: (error: Error) => void;
}

/** A device the agent may offer: one it found, or one of its managed pools' (with what the pool says of it). */
export type OfferedDevice = FoundDevice & { pooled?: ManagedDevice };

/**
 * Answers about the client itself that no retry changes: 403 on a claim (not an agent client), or 401 from
 * the token endpoint (its secret or the client is no longer accepted). A 401 on an API call is not one: the
 * SDK gets a new token first, and only that token call's 401 is final.
 */
function refusesThisClient(error: TestbayApiError): boolean {
  return error.status === 403 || (error.status === 401 && error.path === "/oauth/token");
}

/**
 * What a claim offers for a device. A model read with getprop is kept as the device names it ("Pixel 8
 * Pro", or "sdk_gphone64_x86_64" on an emulator); one that came from adb's `model:` attribute (the
 * fallback, and any device described elsewhere) has adb's underscores turned back into spaces.
 */
export function claimDevice(device: Device & { modelFrom?: FoundDevice["modelFrom"] }): AgentDevice {
  const { serial, platform, model, os_version } = device;
  // xcrun's names are Apple's own ("iPhone SE (3rd generation)"), as the device names itself.
  const asNamed = device.modelFrom === "getprop" || device.modelFrom === "xcrun";
  return {
    serial,
    platform,
    model: asNamed ? model : model.replaceAll("_", " "),
    os_version,
  };
}

const describe = (d: Device) =>
  `${d.serial} (${d.model}, ${d.platform === "ios" ? "iOS" : "Android"} ${d.os_version})`;

/**
 * The agent loop: `concurrency` workers, each claiming (long poll) the next job it can do with the
 * devices free at that moment, running it, and claiming again. While it runs, the agent looks for
 * devices plugged in or unplugged every `deviceRefreshMs`; a change ends the claims under way so the
 * next ones offer the new set. `stop()` ends claiming and looking at once, lets running jobs finish
 * within a grace period, then hands the rest back to the server.
 */
export class Agent {
  private readonly stopClaiming = new AbortController();
  private readonly shutdown = new AbortController();
  private readonly busySerials = new Set<string>();
  private readonly health = new DeviceHealth();
  private workers: Promise<void>[] = [];
  private tracker: DeviceTracker | null = null;
  private tools = { adbAvailable: false, maestroAvailable: false, xcodeAvailable: false };
  private stepTypes: string[] = ["inspect"];
  /** Aborted (and replaced) whenever the devices to offer change: claims under way end and start again. */
  private offerChanged = new AbortController();
  private refreshTimer: NodeJS.Timeout | undefined;
  /**
   * Workers claim one at a time. The server gives a run the first offered device that fits it, so two claims
   * in flight with the same free devices would both get the same one (three shards of one device entry on a
   * three-device agent: all on the first device). One claim in flight offers everything any worker could do.
   */
  private claimTurn: Promise<void> = Promise.resolve();
  /**
   * Claims given up on while they waited (the free devices changed), by claim_id, with when: named in the
   * claims after them, so that a run the server granted just as the agent hung up goes back to the queue at
   * once. Named for a while, not once: the server that held the given-up claim may commit it only after the
   * next claim reached another instance.
   */
  private readonly abandoned = new Map<string, number>();
  private refreshing: Promise<void> | undefined;
  /** Why each platform was not listed at the last look (absent: it was): said once, and once when it mends. */
  private readonly lastUnlisted = new Map<Platform, Unlisted>();
  private forbidden = false;
  readonly cache: BinaryCache;
  /** The sessions this agent runs, by Testbay's session ID, for the channel's commands. */
  private readonly sessions = new AppiumSessionRegistry();
  /** The relay's WebSocket (docs/appium-relay.md, "The channel"): open while Appium is offered. */
  private channel: ChannelClient | null = null;
  private appiumServices: AppiumJobServices | undefined;

  constructor(private readonly options: AgentOptions) {
    this.cache = new BinaryCache(options.cacheDir);
  }

  /** Looks at the host (devices, tools), then starts the workers and the device watch. */
  async start(): Promise<void> {
    const { log } = this.options;
    const env = this.options.env ?? process.env;
    if (this.options.devices === "auto") {
      const adb = { env, signal: this.stopClaiming.signal };
      this.tracker = new DeviceTracker({
        list: () => listReadyDevices(adb),
        describe: (entry) => describeDevice(entry, adb),
      });
      this.reportUnlisted(await this.tracker.refresh());
    }
    this.tools = await detectTools(env.PATH ?? "");
    this.stepTypes = this.runnableStepTypes();
    if (this.options.appium) this.startChannel(this.options.appium);
    this.startPools();
    const workers = this.wantedWorkers();
    log(
      `agent ${this.options.name}: step types ${this.stepTypes.join(", ")}; devices ${
        this.offerable().map(describe).join(", ") || "none"
      }; ${workers} at a time${this.options.concurrency === "devices" ? " (one per device)" : ""}`,
    );
    this.addWorkers(workers);
    if (this.tracker) this.scheduleRefresh();
  }

  /**
   * Stops claiming and looking for devices, waits up to `graceMs` for running jobs, then stops the rest:
   * they are completed as errored with reason agent_shutdown, which puts their runs back in the queue
   * for another agent.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopClaiming.abort();
    clearTimeout(this.refreshTimer);
    const grace = setTimeout(() => this.shutdown.abort(), graceMs);
    try {
      await Promise.all([...this.workers, this.refreshing]);
    } finally {
      // API.md §13: on SIGTERM the agent stops the emulators and simulators it started, and nothing else.
      await Promise.all((this.options.managed ?? []).map((pool) => pool.stop()));
      clearTimeout(grace);
      // Sessions still running during the grace needed the channel for their commands: it closes after them.
      // Every Appium this process started is stopped too, whichever job started it (API.md §12: SIGTERM).
      await this.channel?.stop();
      if (this.options.appium) await stopAllAppiumServers();
    }
  }

  /**
   * Starts the managed pools without waiting for their boots (minutes, for emulators): their devices are offered
   * as each becomes idle, and SIGTERM can stop them while they boot.
   */
  private startPools(): void {
    const { log } = this.options;
    for (const pool of this.options.managed ?? []) {
      pool.onChange?.(() => {
        // A device that leaves `idle` while a job holds it went down under that job (the pool resets only after).
        for (const device of pool.devices()) {
          if (this.busySerials.has(device.serial) && device.state !== "idle")
            this.wentDown.add(device.serial);
        }
        if (!this.stopClaiming.signal.aborted) void this.offerChange();
      });
      pool.start().then(
        () => {
          const devices = pool.devices();
          const ready = devices.filter((d) => d.state === "idle").map((d) => d.serial);
          log(`managed devices ready: ${ready.join(", ") || "none"} of ${devices.length}`);
          if (!this.stopClaiming.signal.aborted) void this.offerChange();
        },
        (error: Error) => {
          log(`managed devices cannot start: ${error.message}`);
          this.options.onManagedRefused?.(error);
        },
      );
    }
  }

  /**
   * Opens the relay's channel for the sessions' commands: the server sends each one down it and the registry
   * hands it to its session's Appium (src/appium/session-registry.ts).
   */
  private startChannel(offer: AppiumOffer): void {
    const { client, log, name } = this.options;
    const channel = new ChannelClient({
      baseUrl: client.transport.baseUrl,
      agentId: name,
      tokens: client.tokens,
      handle: (command) => this.sessions.handle(command),
      log,
      onRefused: () => log("the server refused the Appium channel: sessions cannot be relayed"),
    });
    this.channel = channel;
    this.appiumServices = {
      agent: offer.agentOptions,
      drivers: offer.inventory.drivers,
      registry: this.sessions,
      ended: (session, reason) => channel.ended(session, reason),
    };
    channel.start();
  }

  /** How many workers the options ask for with the devices there are now. */
  private wantedWorkers(): number {
    const { concurrency } = this.options;
    return concurrency === "devices" ? Math.max(1, this.offerable().length) : concurrency;
  }

  /** Starts workers until there are `count` (never fewer: an idle worker only waits in its claim turn). */
  private addWorkers(count: number): void {
    while (this.workers.length < count) this.workers.push(this.work(this.workers.length));
  }

  /** Every worker would meet the same refusal: the first one stops them all and tells the owner once. */
  private refuse(error: TestbayApiError): void {
    this.stopClaiming.abort();
    clearTimeout(this.refreshTimer);
    if (this.forbidden) return;
    this.forbidden = true;
    if (this.options.onForbidden) this.options.onForbidden(error);
    else this.options.log(`claims refused (${error.message}): no longer claiming jobs`);
  }

  /** The connected devices the agent may still offer: not drained. */
  private offerable(): OfferedDevice[] {
    const pools = this.options.managed ?? [];
    const managed = pools.flatMap((pool) => pool.devices());
    // adb lists the managed emulators too; they are offered as the pool describes them, and only when idle.
    const managedSerials = new Set(managed.map((d) => d.serial));
    const found = (this.tracker?.devices() ?? []).filter(
      (d) => !managedSerials.has(d.serial) && !this.health.isDrained(d.serial),
    );
    const ready = managed
      .filter((d) => d.state === "idle")
      .map(
        (d): OfferedDevice => ({
          serial: d.serial,
          platform: d.platform,
          model: d.model,
          os_version: d.os_version,
          modelFrom: d.platform === "ios" ? "xcrun" : "getprop",
          transportId: null,
          api_level: d.api_level,
          abi: d.abi,
          emulator: true,
          pooled: d,
        }),
      );
    return [...found, ...ready];
  }

  /** The pool that manages `serial`, if any. */
  private poolOf(serial: string): ManagedDevicePool | undefined {
    return (this.options.managed ?? []).find((pool) => pool.devices().some((d) => d.serial === serial));
  }

  /** What a claim says of a device: the §7 fields, and the §13 facts while the server takes them. */
  private describeForClaim(device: OfferedDevice, state: ManagedDevice["state"]): AgentDevice {
    const base = claimDevice(device);
    if (!this.sendDeviceFacts) return base;
    return withDeviceFacts(base, {
      api_level: device.api_level ?? null,
      abi: device.abi ?? null,
      emulator: device.emulator ?? null,
      managed: device.pooled !== undefined,
      pool: device.pooled?.pool ?? null,
      labels: this.options.labels ?? {},
      state,
      error: device.pooled?.error ?? null,
      boot_ms: device.pooled?.boot_ms ?? null,
    });
  }

  /** Devices drained after three infrastructure failures in a row (device-health.ts), with why. */
  private drainedFound(): AgentDevice[] {
    return this.health.drained().map((device) =>
      this.sendDeviceFacts
        ? withDeviceFacts(device, {
            api_level: null,
            abi: null,
            emulator: null,
            managed: false,
            pool: null,
            labels: this.options.labels ?? {},
            state: "drained",
            boot_ms: null,
            error: `${DRAIN_AFTER} infrastructure failures in a row (the device was lost mid-run); restart the agent to offer it again`,
          })
        : device,
    );
  }

  /**
   * The managed devices a claim describes without offering them: booting, resetting, busy (a job holds it) or
   * failed, each with its state (API.md §13), so that GET /agents shows the whole pool; the server gives runs to
   * idle devices only. A server from before §13 knows no states: it is told only of the failed ones, as drained.
   */
  private managedNotOffered(): { devices: AgentDevice[]; drained: AgentDevice[] } {
    const notIdle = (this.options.managed ?? [])
      .flatMap((pool) => pool.devices())
      .map((d) => ({
        device: d,
        state: d.state === "idle" && this.busySerials.has(d.serial) ? "busy" : d.state,
      }))
      .filter(({ state }) => state !== "idle");
    const describe = (d: ManagedDevice, state: ManagedDevice["state"]) =>
      this.describeForClaim(
        { ...d, modelFrom: "getprop", transportId: null, emulator: true, pooled: d },
        state,
      );
    if (!this.sendDeviceFacts) {
      return {
        devices: [],
        drained: notIdle
          .filter(({ state }) => state === "failed")
          .map(({ device }) => describe(device, "failed")),
      };
    }
    return { devices: notIdle.map(({ device, state }) => describe(device, state)), drained: [] };
  }

  /**
   * Whether claims carry API.md §13's device facts. A server from before §13 refuses unknown device fields
   * (400): the agent then offers the §7 fields only, says so once, and keeps working.
   */
  private sendDeviceFacts = true;
  /** Managed devices that went down while a job held them (see startPools), by serial, until their next job. */
  private readonly wentDown = new Set<string>();
  /** How long the reset before a device's next run took, by serial: sent with that run's completion. */
  private readonly setupMs = new Map<string, number>();

  private runnableStepTypes(): string[] {
    const facts = {
      allowShell: this.options.allowShell,
      ...this.tools,
      appiumAvailable: this.options.appium !== undefined,
      devices: this.offerable(),
    };
    return [...runnableStepTypes(facts)].sort();
  }

  private scheduleRefresh(): void {
    if (this.stopClaiming.signal.aborted) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshing = this.refreshInTurn().finally(() => {
        this.refreshing = undefined;
        this.scheduleRefresh();
      });
    }, this.options.deviceRefreshMs ?? 5000);
  }

  /** Refreshes run one after another: the timer's and one asked for after a lost device may meet. */
  private refreshQueue: Promise<void> = Promise.resolve();

  private refreshInTurn(): Promise<void> {
    const next = this.refreshQueue.then(() => this.refreshDevices());
    this.refreshQueue = next.catch(() => {});
    return next;
  }

  private async refreshDevices(): Promise<void> {
    const { log } = this.options;
    const change = await (this.tracker as DeviceTracker).refresh();
    if (this.stopClaiming.signal.aborted) return;
    this.reportUnlisted(change);
    for (const device of change.removed) log(`device ${describe(device)} disconnected`);
    for (const device of change.added) {
      const drained = this.health.isDrained(device.serial)
        ? "; drained, not offered until the agent restarts"
        : "";
      log(`device ${describe(device)} connected${drained}`);
    }
    if (change.added.length > 0 || change.removed.length > 0) await this.offerChange();
    this.growWorkers();
  }

  /** One worker more for each device beyond those there were (concurrency: devices), said once each time. */
  private growWorkers(): void {
    if (this.options.concurrency !== "devices" || this.stopClaiming.signal.aborted) return;
    const wanted = this.wantedWorkers();
    if (wanted > this.workers.length) {
      this.options.log(`${wanted} at a time (one per device)`);
      this.addWorkers(wanted);
    }
  }

  /**
   * Says which platforms could not be listed and why, when that changes: a tool that keeps failing the same way
   * is said once, not every few seconds, and its mending once too. A failed tool's devices are still offered
   * as last known (the tracker keeps them), and the line names them.
   */
  private reportUnlisted(change: RefreshResult): void {
    const { log } = this.options;
    const now = new Map(change.unlisted.map((u) => [u.platform, u]));
    for (const [platform, was] of this.lastUnlisted) {
      if (now.has(platform)) continue;
      const { name, tool } = PLATFORM_NAMES[platform];
      log(
        was.outcome === "failed"
          ? `${tool} lists ${name} devices again`
          : `${tool} found: listing ${name} devices`,
      );
    }
    for (const [platform, unlisted] of now) {
      const was = this.lastUnlisted.get(platform);
      if (was?.outcome === unlisted.outcome && was.reason === unlisted.reason) continue;
      const { name, tool } = PLATFORM_NAMES[platform];
      if (unlisted.outcome === "no-tool") {
        log(`no ${name} devices: ${unlisted.reason}`);
        continue;
      }
      const kept = this.offerable().filter((d) => d.platform === platform);
      log(
        `cannot list ${name} devices (${unlisted.reason}); ${
          kept.length > 0
            ? `still offering the last known: ${kept.map(describe).join(", ")}`
            : `none offered until ${tool} answers`
        }`,
      );
    }
    this.lastUnlisted.clear();
    for (const [platform, unlisted] of now) this.lastUnlisted.set(platform, unlisted);
  }

  /** The devices to offer changed: recompute the step types and restart the claims under way. */
  private async offerChange(): Promise<void> {
    this.tools = await detectTools((this.options.env ?? process.env).PATH ?? "");
    const stepTypes = this.runnableStepTypes();
    if (stepTypes.join() !== this.stepTypes.join()) {
      this.stepTypes = stepTypes;
      this.options.log(`step types now ${stepTypes.join(", ")}`);
    }
    const previous = this.offerChanged;
    this.offerChanged = new AbortController();
    previous.abort();
    // Managed devices become idle one by one after the start: one worker each, as for devices plugged in.
    this.growWorkers();
  }

  private async work(worker: number): Promise<void> {
    const { client, log } = this.options;
    let failures = 0;
    while (!this.stopClaiming.signal.aborted) {
      const previousTurn = this.claimTurn;
      let endTurn = () => {};
      this.claimTurn = new Promise((resolve) => {
        endTurn = resolve;
      });
      await previousTurn;
      if (this.stopClaiming.signal.aborted) {
        endTurn();
        return;
      }
      // Taken before the devices are read, so a change from here on ends this claim.
      const offer = this.offerChanged.signal;
      const free = this.offerable().filter((d) => !this.busySerials.has(d.serial));
      const unoffered = this.managedNotOffered();
      const drained = [...this.drainedFound(), ...unoffered.drained];
      const claim = anyOf(this.stopClaiming.signal, offer);
      let job: AgentJob | undefined;
      const claimedAt = performance.now();
      const claimId = randomUUID();
      const abandoned = this.abandonedClaims(claimedAt);
      try {
        job = await client.agent.claim(
          {
            agent_id: this.options.name,
            claim_id: claimId,
            ...(abandoned.length > 0 ? { abandoned_claims: abandoned } : {}),
            devices: [...free.map((d) => this.describeForClaim(d, "idle")), ...unoffered.devices],
            // Kept as they were offered (claimDevice already applied): no second underscore pass.
            ...(drained.length > 0 ? { drained_devices: drained } : {}),
            host: true,
            step_types: this.stepTypes as NonNullable<Parameters<typeof client.agent.claim>[0]["step_types"]>,
            // What --appium found at start, for GET /agents (API.md §12): a claim without it offers no Appium.
            ...(this.options.appium ? { appium: this.options.appium.inventory } : {}),
            wait_seconds: this.options.claimWaitSeconds ?? 30,
          },
          claim.signal,
        );
        failures = 0;
      } catch (error) {
        if (this.stopClaiming.signal.aborted) return;
        if (offer.aborted) {
          this.abandoned.set(claimId, performance.now());
          continue;
        }
        if (error instanceof TestbayApiError && refusesThisClient(error)) {
          this.refuse(error);
          return;
        }
        if (this.sendDeviceFacts && deviceFactsRefused(error)) {
          this.sendDeviceFacts = false;
          log(
            `the server does not take API.md §13 device facts yet (${(error as Error).message}); offering serial, platform, model and os_version only`,
          );
          endTurn();
          continue;
        }
        // A claim that failed on the way back (a proxy's 502, a reset) may have been granted all the same.
        this.abandoned.set(claimId, performance.now());
        failures++;
        endTurn();
        const waitMs = Math.min(30_000, 1000 * 2 ** Math.min(failures, 5));
        log(
          `worker ${worker}: claim failed (${(error as Error).message}); trying again in ${waitMs / 1000} s`,
        );
        await pause(waitMs, this.stopClaiming.signal);
        continue;
      } finally {
        claim.dispose();
        // The claimed device is busy before the next worker reads the free ones.
        if (job?.device) this.busySerials.add(job.device.serial);
        endTurn();
      }
      if (!job) {
        // A server that is shutting down answers at once: do not spin on it.
        if (performance.now() - claimedAt < 1000) await pause(1000, this.stopClaiming.signal);
        continue;
      }
      await this.runClaimed(worker, job);
    }
  }

  /** The claims given up on in the last `abandonedForMs`, at most `maxAbandoned` (the newest), to name. */
  private abandonedClaims(now: number): string[] {
    for (const [id, at] of this.abandoned) if (now - at > abandonedForMs) this.abandoned.delete(id);
    // Oldest first (insertion order): drop from the front.
    for (const id of this.abandoned.keys()) {
      if (this.abandoned.size <= maxAbandoned) break;
      this.abandoned.delete(id);
    }
    return [...this.abandoned.keys()];
  }

  private async runClaimed(worker: number, job: AgentJob): Promise<void> {
    const { client, log } = this.options;
    const device = job.device ?? null;
    if (device) this.busySerials.add(device.serial);
    try {
      log(
        `worker ${worker}: running ${job.execution_id} (attempt ${job.device_run.attempt}) on ${device?.serial ?? "host"}`,
      );
      const setupMs = device ? this.setupMs.get(device.serial) : undefined;
      if (device) {
        this.setupMs.delete(device.serial);
        this.wentDown.delete(device.serial);
      }
      // A device the agent does not manage keeps its own screen rotation and language (API.md §14).
      const putSettingsBack =
        device && !this.poolOf(device.serial)
          ? await rememberDeviceSettings(job, device, {
              env: this.options.env ?? process.env,
              log,
              workDir: this.options.workRoot,
            })
          : null;
      const result = await (this.options.runJob ?? runJob)(job, {
        client,
        cache: this.cache,
        androidTools: this.options.androidTools ?? null,
        workRoot: this.options.workRoot,
        log,
        shutdown: this.shutdown.signal,
        ...(this.appiumServices ? { appium: this.appiumServices } : {}),
        ...(setupMs !== undefined ? { setupMs } : {}),
        ...(device ? { deviceLost: () => this.wentDown.has(device.serial) } : {}),
      });
      log(
        `worker ${worker}: ${job.execution_id} ended ${result.status}${result.reason ? ` (${result.reason})` : ""}`,
      );
      const pool = device ? this.poolOf(device.serial) : undefined;
      if (device && pool) {
        // API.md §13: the next run on a managed device finds nothing this one left; the reset's time is the next
        // run's setup_ms. The device stays busy (not offered) until the reset is done.
        pool.runFinished(device.serial, result.reason !== DEVICE_LOST);
        const reset = await pool.reset(device.serial);
        this.setupMs.set(device.serial, reset.setupMs);
        log(`device ${device.serial} reset in ${reset.setupMs} ms`);
      } else if (device && result.reason !== DEVICE_LOST) {
        await putSettingsBack?.();
        await uninstallAfterRun(job, device, {
          env: this.options.env ?? process.env,
          log,
          scratchDir: this.options.workRoot,
          cache: this.cache,
        });
      }
      // Our own picture of the device when it is still here (the job echoes what the claim offered).
      const known = device && this.tracker?.devices().find((d) => d.serial === device.serial);
      if (device && !pool && this.health.record(known ? claimDevice(known) : device, result)) {
        log(
          `device ${device.serial} drained after 3 infrastructure failures in a row; restart the agent to offer it again`,
        );
        await this.offerChange();
      }
      // adb lost the device: look again now, so it is not offered (and lost again) before the next refresh.
      if (result.reason === "device_lost" && this.tracker) await this.refreshInTurn();
      this.options.onJobDone?.(job, result);
    } catch (error) {
      log(
        `worker ${worker}: job ${job.execution_id} failed in the agent: ${(error as Error).stack ?? error}`,
      );
    } finally {
      if (device) {
        this.busySerials.delete(device.serial);
        // The claim in flight (another worker's turn) does not offer this device: start it again with it. The
        // server hands back a run it gave a claim whose agent hung up.
        const previous = this.offerChanged;
        this.offerChanged = new AbortController();
        previous.abort();
      }
    }
  }
}

/** How long a given-up claim is named in later claims: well past any claim's 30 s wait. */
const abandonedForMs = 120_000;
/** The server takes at most 50 names per claim. */
const maxAbandoned = 50;

/**
 * A signal that fires with any input, whose listeners come off the inputs at dispose(): one claim after
 * another must not pile listeners onto the stop signal, which lives as long as the agent.
 */
function anyOf(...inputs: AbortSignal[]): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const fire = () => controller.abort();
  for (const input of inputs) {
    if (input.aborted) controller.abort();
    else input.addEventListener("abort", fire, { once: true });
  }
  return {
    signal: controller.signal,
    dispose: () => {
      for (const input of inputs) input.removeEventListener("abort", fire);
    },
  };
}
