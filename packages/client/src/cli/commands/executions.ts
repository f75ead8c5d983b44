import { writeFile } from "node:fs/promises";
import type { Command } from "commander";
import { isFinal } from "../../sdk/models.ts";
import { ExitCode } from "../exit-codes.ts";
import { executionTable, formatBytes, table } from "../output.ts";
import type { Session } from "../session.ts";

/** `testbay logs|junit|artifacts|cancel`: one execution's log, report and artifacts, and cancelling it. */
export function addExecutionCommands(program: Command, session: Session): void {
  program
    .command("logs")
    .description("Print an execution's log (what its agents reported)")
    .argument("<execution_id>", "execution ID (ex_…)")
    .action(async (id: string) => {
      const log = await session.testbay().executions.log(id);
      session.print(log.endsWith("\n") || log === "" ? log : `${log}\n`);
      session.setOutcome({ code: ExitCode.ok });
    });

  program
    .command("junit")
    .description("Print an execution's JUnit XML report, or write it to a file")
    .argument("<execution_id>", "execution ID (ex_…)")
    .option("-o, --output <file>", "write the report here instead of stdout")
    .action(async (id: string, options: { output?: string }) => {
      const xml = await session.testbay().executions.junit(id);
      if (options.output) {
        const target = session.resolvePath(options.output);
        await writeFile(target, xml);
        session.say(`Wrote the JUnit report of ${id} to ${target}.`);
      } else session.print(xml.endsWith("\n") ? xml : `${xml}\n`);
      session.setOutcome({ code: ExitCode.ok });
    });

  program
    .command("artifacts")
    .description("List an execution's artifacts (screenshots, logcat, reports) with their download URLs")
    .argument("<execution_id>", "execution ID (ex_…)")
    .action(async (id: string) => {
      const items = await session.testbay().executions.artifacts(id);
      if (!session.json) {
        const rows = [["NAME", "DEVICE", "ATTEMPT", "SIZE", "URL"]];
        for (const a of items) {
          rows.push([a.name, String(a.device), String(a.attempt), formatBytes(a.size_bytes), a.url]);
        }
        session.print(items.length ? table(rows) : `No artifacts for ${id}.\n`);
      }
      session.setOutcome({ code: ExitCode.ok, json: { items } });
    });

  program
    .command("cancel")
    .description("Cancel an execution: a queued one at once, a running one when its agent hears of it")
    .argument("<execution_id>", "execution ID (ex_…)")
    .action(async (id: string) => {
      const execution = await session.testbay().executions.cancel(id);
      // The answer is the execution as it is now: cancelled by this call or earlier, the same to a pipeline.
      if (execution.status === "cancelled") session.say(`${id} is cancelled.`);
      else if (isFinal(execution.status))
        session.say(`${id} had ended already (${execution.status}): nothing to cancel.`);
      else
        session.say(
          `Asked to cancel ${id}: it is ${execution.status}; its agent stops it at its next heartbeat.`,
        );
      if (!session.json) session.print(executionTable([execution]));
      session.setOutcome({ code: ExitCode.ok, json: { execution } });
    });
}
