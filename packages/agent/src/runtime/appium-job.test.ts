import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { AgentEvent, AgentJob, Testbay } from "@testbay/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PortBlocks } from "../appium/port-blocks.ts";
import { AppiumSessionRegistry } from "../appium/session-registry.ts";
import { isAppiumJob, runAppiumJob } from "./appium-job.ts";
import { BinaryCache } from "./binary-cache.ts";
import { EventReporter } from "./event-reporter.ts";
import type { JobRunnerOptions } from "./job-runner-options.ts";

/** A session's job as the server sends it (agent.schemas.ts): no version, an appium step. */
function sessionJob(step: unknown): AgentJob {
  return {
    lease_id: "lease-1",
    lease_expires_at: new Date().toISOString(),
    lease_ttl_seconds: 60,
    execution_id: "exe-1",
    device_run: { id: "run-1", position: 0, attempt: 1, max_attempts: 1, shard: 0, shard_count: 1 },
    plan: { name: "s", timeout_seconds: 60, steps: [step] } as unknown as AgentJob["plan"],
    package_name: null,
    version: null,
    env: {},
    binary_url: null,
    binary: null,
    test_package: null,
    device: { serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" },
  } as AgentJob;
}

let dir: string;
let reports: unknown[];
let events: AgentEvent[];

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "appium-job-"));
  reports = [];
  events = [];
});
afterEach(() => rm(dir, { recursive: true, force: true }));

function run(appium: JobRunnerOptions["appium"]) {
  const client = {
    agent: {
      reportSession: async (_lease: string, body: unknown) => {
        reports.push(body);
        return { state: "failed" };
      },
    },
  } as unknown as Testbay;
  const reporter = new EventReporter({
    send: async (sent) => {
      events.push(...sent);
      return { cancel_requested: false };
    },
    onCancelRequested: () => {},
  });
  return {
    reporter,
    run: {
      jobDir: dir,
      artifactsDir: path.join(dir, "artifacts"),
      reporter,
      stop: new AbortController().signal,
      options: {
        client,
        cache: new BinaryCache(path.join(dir, "cache")),
        workRoot: dir,
        log: () => {},
        shutdown: new AbortController().signal,
        ...(appium ? { appium } : {}),
      },
    },
  };
}

describe("an Appium session's job", () => {
  it("is told from a plan's job by its first step", () => {
    expect(isAppiumJob(sessionJob({ type: "appium", capabilities: {} }))).toBe(true);
    expect(isAppiumJob(sessionJob({ type: "shell", run: "true" }))).toBe(false);
  });

  it("is refused, with the client told why, on an agent started without --appium", async () => {
    const { run: r, reporter } = run(undefined);
    const result = await runAppiumJob(sessionJob({ type: "appium", capabilities: {} }), r);
    await reporter.flush();
    expect(result).toEqual({ status: "errored", reason: "session_not_created" });
    expect(reports).toEqual([
      expect.objectContaining({
        status: "failed",
        error: "session not created",
        message: expect.stringContaining("--appium"),
      }),
    ]);
    expect(events).toContainEqual(
      expect.objectContaining({ type: "step_finished", step_index: 0, status: "errored" }),
    );
  });

  it("is refused when its step is malformed, naming what is wrong", async () => {
    const { run: r } = run({
      agent: {
        executable: null,
        allowLocalApps: false,
        allowPrivateAppUrls: false,
        portBlocks: new PortBlocks(),
      },
      drivers: [],
      registry: new AppiumSessionRegistry(),
      ended: () => {},
    });
    const result = await runAppiumJob(sessionJob({ type: "appium", capabilities: "no" }), r);
    expect(result).toEqual({ status: "errored", reason: "session_not_created" });
    expect(reports).toEqual([
      expect.objectContaining({ status: "failed", message: expect.stringContaining("capabilities") }),
    ]);
  });
});
