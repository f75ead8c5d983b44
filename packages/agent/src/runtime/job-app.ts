/**
 * Whether a claimed job names a registered version. Every plan's job does; an Appium session's may not (API.md
 * §12: a session without `testbay:options.app` tests what is on the device), and then `package_name`, `version`,
 * `binary_url` and `binary` are null (packages/server/src/features/agent/agent.schemas.ts).
 */
import type { AgentJob } from "@testbay/client";

export type AppJob = AgentJob & {
  package_name: string;
  version: string;
  binary: NonNullable<AgentJob["binary"]>;
};

export function hasApp(job: AgentJob): job is AppJob {
  return job.package_name !== null && job.version !== null && job.binary !== null;
}
