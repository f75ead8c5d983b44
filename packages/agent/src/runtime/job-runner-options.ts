import type { Testbay } from "@testbay/client";
import type { AppiumJobServices } from "./appium-job.ts";
import type { BinaryCache } from "./binary-cache.ts";

/** What runs a claimed job (job-runner.ts) and a WebDriver session's job (appium-job.ts) are given. */
export interface JobRunnerOptions {
  client: Testbay;
  cache: BinaryCache;
  /** Each job gets a fresh directory below this one, removed afterwards. */
  workRoot: string;
  log: (message: string) => void;
  /** Aborted when the agent must hand its jobs back (shutdown past its grace period). */
  shutdown: AbortSignal;
  /** What an Appium session's job needs (appium-job.ts); absent when the agent was started without `--appium`. */
  appium?: AppiumJobServices;
}
