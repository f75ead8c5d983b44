import { type Clock, isoTime } from "../../clock.ts";
import { ApiError } from "../../errors.ts";
import type { SessionReport, SessionReports } from "../agent/agent.routes.ts";
import type { LeasedRun } from "../device-runs/index.ts";
import type { ExecutionChanges } from "../live/index.ts";
import type { SessionsRepo } from "./sessions.repo.ts";

/**
 * Takes the agent's word on the Appium session of its job (POST /v1/agent/jobs/{lease_id}/session) into the
 * session's row, and tells every instance (features/live) so that the new-session request waiting for it, on
 * whichever instance, reads the row again at once (new-session.ts).
 */
export class SessionReportsStore implements SessionReports {
  constructor(
    private readonly sessions: SessionsRepo,
    private readonly changes: ExecutionChanges,
    private readonly clock: Clock,
  ) {}

  async report(run: LeasedRun, report: SessionReport) {
    const at = isoTime(this.clock.now());
    const taken =
      report.status === "ready"
        ? await this.sessions.markReady(run.executionId, report.capabilities, at)
        : await this.sessions.markFailed(run.executionId, report.error, report.message, at);
    const session = await this.sessions.find(run.organizationId, run.executionId);
    if (!session) {
      throw new ApiError("invalid_request", {
        reason: "not_a_session",
        detail: `Execution ${run.executionId} is a test plan's run, not a WebDriver session.`,
        fix: "Report a session only for a job whose plan.steps[0] is an appium step.",
      });
    }
    if (taken) this.changes.changed(run.organizationId, run.executionId);
    return session.state;
  }
}
