import type { Testbay } from "@testbay/client";
import type { AppiumDriverInfo } from "../appium/appium-inventory.ts";
import type { SessionEndReason } from "../appium/appium-session.ts";
import type { AppiumAgentOptions } from "../appium/appium-step.ts";
import type { AppiumSessionRegistry } from "../appium/session-registry.ts";
import type { BinaryCache } from "./binary-cache.ts";

/** What runs a claimed job (job-runner.ts) and a WebDriver session's job (appium-job.ts) are given. */
export interface JobRunnerOptions {
  client: Testbay;
  cache: BinaryCache;
  /** The agent's `--android-tools DIR`: the orchestrator and test-services APKs (API.md §14); absent: none. */
  androidTools?: string | null;
  /** Each job gets a fresh directory below this one, removed afterwards. */
  workRoot: string;
  log: (message: string) => void;
  /** Aborted when the agent must hand its jobs back (shutdown past its grace period). */
  shutdown: AbortSignal;
  /** What an Appium session's job needs (appium-job.ts); absent when the agent was started without `--appium`. */
  appium?: AppiumJobServices;
  /**
   * How long the reset before this run took on its managed device (API.md §13): sent with the completion as
   * `setup_ms`. Absent for a device's first run and for devices the agent does not manage.
   */
  setupMs?: number;
  /**
   * True once the run's managed device went down during the run (it crashed and its pool restarted it): a step
   * that did not pass then ends the run as device_lost (handed back), even if the device is back by the time
   * the step looked.
   */
  deviceLost?: () => boolean;
}

/** What the agent lends a session's job when it offers Appium (runtime/agent.ts). */
export interface AppiumJobServices {
  agent: AppiumAgentOptions;
  /** Appium's drivers (GET /agents' list): shell steps' capabilities name the platform's automationName. */
  drivers: readonly AppiumDriverInfo[];
  /** The channel's command handler looks sessions up here. */
  registry: AppiumSessionRegistry;
  /** The channel's `ended` message: the agent ended a session on its own. */
  ended(session: string, reason: SessionEndReason): void;
  /** How often the device is looked for while the session runs; 5 s by default. */
  deviceCheckMs?: number;
}
