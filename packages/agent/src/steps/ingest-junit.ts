/**
 * Reports the test cases of JUnit files through the step context and says what they mean for the step:
 * a failed or errored case fails it, an unreadable report errors it.
 */
import { relative } from "node:path";
import { readJUnitFile } from "../junit/read-junit-file.ts";
import { testCasesOutcome, worstOutcome } from "./outcome.ts";
import type { StepContext, StepOutcome, TestCase } from "./step-types.ts";

export async function ingestJUnitFiles(files: readonly string[], ctx: StepContext): Promise<StepOutcome> {
  const outcomes: StepOutcome[] = [];
  const cases: TestCase[] = [];
  for (const file of files) {
    const shown = relative(ctx.workDir, file) || file;
    const parsed = await readJUnitFile(file);
    if (!parsed.ok) {
      ctx.log("agent", `junit: ${shown}: ${parsed.error}`);
      outcomes.push({ status: "errored", message: `could not read JUnit report ${shown}: ${parsed.error}` });
      continue;
    }
    ctx.log("agent", `junit: ${shown}: ${parsed.testCases.length} test cases`);
    for (const testCase of parsed.testCases) {
      ctx.testCase(testCase);
      cases.push(testCase);
    }
  }
  return worstOutcome(...outcomes, testCasesOutcome(cases));
}
