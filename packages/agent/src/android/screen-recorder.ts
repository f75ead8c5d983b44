/**
 * Video of a run with `screenrecord`, which stops by itself after 180 s (its limit up to Android 13, and
 * a safe value on every release): segments are chained, each to its own file on the device, until the run
 * ends. It must be stopped with SIGINT (`pkill -INT screenrecord` on the device): only then does it write
 * the MP4's index (the moov box); a killed recording is a file no player opens. The segments are pulled
 * when they are to be kept, and removed from the device in any case.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import type { Adb } from "./adb.ts";

/** screenrecord's own limit up to Android 13 ("outside acceptable range [1,180]" above it). */
export const segmentSeconds = 180;

export interface Segment {
  index: number;
  devicePath: string;
  /** The artifact name it gets when kept. */
  artifact: string;
  /**
   * When its screenrecord was started (host clock, ms): screenrecord records from the moment its process
   * starts, so the video's time 0 is this instant (give or take adb's start-up on the device).
   */
  startedAt: number;
  /** When its screenrecord ended (time limit, SIGINT, failure); null while it records. */
  endedAt: number | null;
}

/** Where in the video a moment is: the segment recording then and how far into it, in ms. */
export interface VideoPosition {
  artifact: string;
  offsetMs: number;
}

export class ScreenRecorder {
  private readonly segments: Segment[] = [];
  private stopping = false;
  private loop: Promise<void> = Promise.resolve();
  private failure: string | null = null;

  /** `prefix` makes device paths and artifact names unique per step: "video/step-2". */
  constructor(
    private readonly adb: Adb,
    private readonly prefix: { device: string; artifact: string },
    private readonly log: (line: string) => void,
  ) {}

  start(): void {
    this.loop = this.record();
  }

  /** The segment recording now: the one that shows what is happening at this moment. */
  get current(): Segment | undefined {
    return this.segments.at(-1);
  }

  /**
   * Where the moment `at` (host clock, ms) is in the video: the current segment and the time since it
   * started; a moment after the segment ended (the recording was stopped before a test was reported) is its
   * last frame. Undefined when nothing records.
   */
  position(at: number = Date.now()): VideoPosition | undefined {
    const segment = this.current;
    if (!segment) return undefined;
    const until = segment.endedAt === null ? at : Math.min(at, segment.endedAt);
    return { artifact: segment.artifact, offsetMs: Math.max(0, Math.round(until - segment.startedAt)) };
  }

  /** Why recording stopped early (screenrecord refused or the device went), else null. */
  get error(): string | null {
    return this.failure;
  }

  private async record(): Promise<void> {
    for (let index = 1; !this.stopping; index++) {
      const segment: Segment = {
        index,
        devicePath: `${this.prefix.device}-${index}.mp4`,
        artifact: `${this.prefix.artifact}-${String(index).padStart(2, "0")}.mp4`,
        // Taken as the process is spawned (adb.shell spawns before it first awaits).
        startedAt: Date.now(),
        endedAt: null,
      };
      this.segments.push(segment);
      const started = segment.startedAt;
      const result = await this.adb.shell(
        `screenrecord --time-limit ${segmentSeconds} ${segment.devicePath}`,
        // Past its own limit plus a margin it is stuck: end it rather than wait with the run.
        (segmentSeconds + 30) * 1000,
      );
      segment.endedAt = Date.now();
      if (this.stopping) return;
      if (!result.ok) {
        this.failure = `screenrecord ended: ${result.lines.at(-1) ?? `exit code ${result.exitCode}`}`;
        this.log(`video: ${this.failure}`);
        return;
      }
      // A segment that ended at once without an error would spin: screenrecord is not working here.
      if (Date.now() - started < 500) {
        this.failure = "screenrecord stopped at once";
        this.log(`video: ${this.failure}`);
        return;
      }
    }
  }

  /** Stops the recording so that its last segment is a complete MP4, then waits for it to end. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    // A segment may be starting just as the signal is sent and miss it: signal again until the loop ends.
    for (let tries = 0; tries < 5; tries++) {
      await this.adb.shell("pkill -INT screenrecord", 15_000);
      const ended = await Promise.race([this.loop.then(() => true), delay(5_000).then(() => false)]);
      if (ended) return;
    }
    this.log("video: screenrecord did not stop on SIGINT; its last segment may be incomplete");
  }

  /**
   * Pulls the segments into `dir` (artifact names as relative paths) when `keep`, then removes them from the
   * device. Returns the artifact names of the segments kept.
   */
  async collect(dir: string, keep: boolean): Promise<string[]> {
    const kept: string[] = [];
    for (const segment of this.segments) {
      if (keep) {
        await mkdir(path.dirname(path.join(dir, segment.artifact)), { recursive: true });
        const pulled = await this.adb.run(
          ["pull", segment.devicePath, path.join(dir, segment.artifact)],
          300_000,
        );
        if (pulled.ok) kept.push(segment.artifact);
        else this.log(`video: could not pull ${segment.devicePath}: ${pulled.lines.at(-1) ?? ""}`);
      }
      await this.adb.shell(`rm -f ${segment.devicePath}`, 15_000);
    }
    return kept;
  }
}
