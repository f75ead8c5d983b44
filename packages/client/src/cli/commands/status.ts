import type { Command } from "commander";
import { gitHubFollow, gitHubOptions } from "../../github/github-flags.ts";
import type { Execution } from "../../sdk/models.ts";
import { parseDuration } from "../duration.ts";
import { ExitCode, UsageError } from "../exit-codes.ts";
import { followExecutions } from "../follow.ts";
import { executionTable } from "../output.ts";
import { appVersionLabel, sessionLabel } from "../plan-label.ts";
import type { Session } from "../session.ts";

/** `testbay status`: executions as they are, or with --wait followed until they end. */
export function addStatusCommand(program: Command, session: Session): void {
  program
    .command("status")
    .description(
      "Show executions; exit 1 when one of them failed, errored or was cancelled. With --wait, follow them until they end, as run --wait does",
    )
    .argument("<execution_id...>", "execution IDs (ex_…)")
    .option("--wait", "wait until every execution ends, then print a summary (as run --wait)")
    .option("--timeout <duration>", "how long --wait waits, e.g. 90s, 60m, 2h", "60m")
    .option("--junit <file>", "with --wait: write one merged JUnit XML report here")
    .addOption(gitHubOptions.checks)
    .addOption(gitHubOptions.comment)
    .addOption(gitHubOptions.sourceRoot)
    .action(async (ids: string[], options: { wait?: boolean; timeout: string; junit?: string }) => {
      const timeoutMs = parseDuration(options.timeout);
      if (options.junit && !options.wait)
        throw new UsageError("--junit needs --wait: the report is written once all executions end.");
      if (new Set(ids).size !== ids.length)
        throw new UsageError("An execution ID is named twice: name each once.");
      const github = gitHubFollow(options, options.wait === true, session);
      const testbay = session.testbay();
      const executions: Execution[] = [];
      // Waiting begins with these reads: they outlast a server that is restarting, as the polls do (rule 13).
      const deadlineAt = options.wait ? session.clock.now() + timeoutMs : undefined;
      for (const id of ids) {
        executions.push(
          await testbay.executions.get(
            id,
            deadlineAt === undefined ? {} : { deadlineAt, untilDeadline: true },
          ),
        );
      }
      if (options.wait) {
        const apps = [...new Set(executions.map((e) => appVersionLabel(e) ?? sessionLabel))];
        session.setOutcome(
          await followExecutions(session, testbay, executions, {
            timeoutMs,
            deadlineAt,
            junit: options.junit,
            title: `Testbay: ${apps.join(", ")}`,
            report: {},
            startCode: ExitCode.ok,
            github,
          }),
        );
        return;
      }
      if (!session.json) session.print(executionTable(executions));
      const ended = executions.filter((e) => ["failed", "errored", "cancelled"].includes(e.status));
      session.setOutcome({ code: ended.length ? ExitCode.testsFailed : ExitCode.ok, json: { executions } });
    });
}
