import { readFile } from "node:fs/promises";
import path from "node:path";
import { UsageError } from "../cli/exit-codes.ts";
import type { Session } from "../cli/session.ts";
import { convertFlankFile, type FlankConversion } from "./convert.ts";
import { FlankFileError, formatFlankIssue } from "./flank-file.ts";

/** A flank file's problems, printed: every error at its line, then why nothing was sent (exit 2). */
export class FlankFileRefused extends UsageError {}

/**
 * Reads and converts the -c file: its errors printed line by line and thrown as a usage error (nothing was
 * sent), its warnings printed one line each. The plan is named `flank:<path>` (the path as given, with /),
 * unless --plan-name.
 */
export async function loadFlankFile(
  session: Session,
  options: { config: string; planName?: string | undefined },
): Promise<FlankConversion> {
  const resolved = session.resolvePath(options.config);
  let text: string;
  try {
    text = await readFile(resolved, "utf8");
  } catch {
    throw new UsageError(`-c ${options.config}: no such file (looked for ${resolved}).`);
  }
  const fileName = options.config;
  const planName = options.planName ?? `flank:${path.normalize(options.config).split(path.sep).join("/")}`;
  try {
    const conversion = convertFlankFile(text, fileName, planName, session.io.env);
    for (const warning of conversion.warnings) session.say(`warning: ${formatFlankIssue(fileName, warning)}`);
    return conversion;
  } catch (error) {
    if (!(error instanceof FlankFileError)) throw error;
    for (const issue of error.issues) session.say(`error: ${formatFlankIssue(fileName, issue)}`);
    const n = error.issues.length;
    throw new FlankFileRefused(
      `${fileName} has ${n} problem${n === 1 ? "" : "s"}; nothing was sent to the server.`,
    );
  }
}
