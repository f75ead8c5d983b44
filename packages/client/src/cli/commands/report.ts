import { stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { reportsApi } from "../../sdk/reports.ts";
import { ExitCode, UsageError } from "../exit-codes.ts";
import { formatBytes } from "../output.ts";
import type { Session } from "../session.ts";

/** Where the report goes without -o: a file named after the execution, in the current directory. */
export function defaultReportFile(executionId: string, ctrf: boolean): string {
  const safe = executionId.replace(/[^A-Za-z0-9_-]/g, "_");
  return ctrf ? `testbay-report-${safe}.ctrf.json` : `testbay-report-${safe}.html`;
}

/** Said before the API is asked: a folder that is not there is a mistake in -o, not a failed request. */
async function checkFolder(flagged: string, target: string): Promise<void> {
  const folder = path.dirname(target);
  const found = await stat(folder).catch(() => null);
  if (!found?.isDirectory()) {
    throw new UsageError(
      `-o ${flagged}: the folder ${folder} does not exist. Create it first, or write the report elsewhere (-o report.html).`,
    );
  }
}

async function write(flagged: string, target: string, text: string): Promise<void> {
  try {
    await writeFile(target, text);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "an error";
    const why =
      code === "EACCES" || code === "EPERM"
        ? "permission denied"
        : code === "EISDIR"
          ? "it is a folder"
          : `${code}: ${(error as Error).message}`;
    throw new UsageError(`-o ${flagged}: cannot write ${target} (${why}). Choose another file with -o.`);
  }
}

/** `testbay report EXECUTION_ID [-o FILE] [--ctrf]`: an execution's report to share (API.md §16). */
export function addReportCommand(program: Command, session: Session): void {
  program
    .command("report")
    .description(
      "Save an execution's report to share: one HTML file that opens anywhere (failures with screenshots, all tests), or CTRF JSON with --ctrf",
    )
    .argument("<execution_id>", "execution ID (ex_…)")
    .option(
      "-o, --output <file>",
      "write it here (default testbay-report-EXECUTION_ID.html, or .ctrf.json with --ctrf); - for stdout",
    )
    .option("--ctrf", "the Common Test Report Format (CTRF JSON) instead of HTML, for tools that read CTRF")
    .action(async (id: string, options: { output?: string; ctrf?: boolean }) => {
      const ctrf = options.ctrf === true;
      const flagged = options.output ?? defaultReportFile(id, ctrf);
      const toStdout = flagged === "-";
      const target = toStdout ? "-" : session.resolvePath(flagged);
      if (!toStdout) await checkFolder(flagged, target);
      const reports = reportsApi(session.testbay().transport);
      const text = ctrf ? `${JSON.stringify(await reports.ctrf(id), null, 2)}\n` : await reports.html(id);
      const bytes = Buffer.byteLength(text);
      if (toStdout) session.print(text);
      else {
        await write(flagged, target, text);
        session.say(
          ctrf
            ? `Wrote the CTRF report of ${id} to ${target} (${formatBytes(bytes)}).`
            : `Wrote the report of ${id} to ${target} (${formatBytes(bytes)}): open it in any browser; it needs nothing else.`,
        );
      }
      session.setOutcome({
        code: ExitCode.ok,
        json: toStdout
          ? undefined
          : { execution_id: id, format: ctrf ? "ctrf" : "html", file: target, bytes },
      });
    });
}
