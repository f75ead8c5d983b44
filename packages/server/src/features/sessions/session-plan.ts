import type { DeviceSelectors } from "../device-runs/index.ts";
import type { SessionRequest } from "./capabilities.ts";

/** The step type of a WebDriver session: agents started with --appium offer it (API.md §12, the agent side). */
export const appiumStepType = "appium";

/**
 * Room past max_duration_seconds for what an agent does around the session (installing the app, starting
 * Appium, uploading the recording): the plan's timeout, after which the agent stops whatever still runs.
 */
const setupAndTeardownSeconds = 300;

/** What the agent gets in plan.steps[0] (docs/appium-relay.md, "The path of a session" step 2). */
export interface AppiumStep {
  type: typeof appiumStepType;
  name: string;
  /** What Appium gets: the client's capabilities without testbay:options and the keys Testbay owns. */
  capabilities: Record<string, unknown>;
  options: { idle_timeout_seconds: number; max_duration_seconds: number; record_video: boolean };
  /** Keys Testbay owns that the client sent and that were left out, for the session's log. */
  ignored_capabilities: string[];
}

/**
 * The device entry the session's device run asks for, read as a plan's devices entry is
 * (device-runs/requirements.ts), except that the OS version is a prefix: a plan's `os_version` is the device's
 * exactly, a session's `appium:platformVersion` its start (API.md §5 and §12; device-runs/os-version-prefix.ts).
 */
export interface SessionDevice extends DeviceSelectors {
  platform: string;
  model?: string;
  os_version_prefix?: string;
}

/**
 * The plan snapshot of a session's execution, made up from its capabilities (it has no test plan):
 * `{name, device, steps: [appium step], timeout_seconds, max_attempts}`. One attempt: a session whose agent is
 * lost cannot be resumed elsewhere, its client holds Appium's state.
 */
export function sessionPlan(request: SessionRequest) {
  const device: SessionDevice = { platform: request.device.platform };
  if (request.device.model !== null) device.model = request.device.model;
  if (request.device.osVersionPrefix !== null) device.os_version_prefix = request.device.osVersionPrefix;
  Object.assign(device, request.device.selectors);
  const { options } = request;
  const step: AppiumStep = {
    type: appiumStepType,
    name: "Appium session",
    capabilities: request.appiumCapabilities,
    options: {
      idle_timeout_seconds: options.idleTimeoutSeconds,
      max_duration_seconds: options.maxDurationSeconds,
      record_video: options.recordVideo,
    },
    ignored_capabilities: request.ignoredCapabilities,
  };
  return {
    device,
    plan: {
      name: options.name ?? "Appium session",
      ...(options.build === null ? {} : { build: options.build }),
      device,
      steps: [step],
      timeout_seconds: options.maxDurationSeconds + setupAndTeardownSeconds,
      max_attempts: 1,
    },
  };
}
