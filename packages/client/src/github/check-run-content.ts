import { dashboardLink } from "../cli/wait-view.ts";
import type { Execution } from "../sdk/models.ts";
import type { FailureKind, ReportedTest } from "./failure-kind.ts";
import type { SourceLocation } from "./source-files.ts";

/** A check run's conclusion (GitHub's checks API). */
export type Conclusion = "success" | "failure" | "neutral" | "cancelled" | "timed_out";

/** What the CLI knows of one reported failure when it writes the check run and the comment. */
export interface ClassifiedFailure {
  test: ReportedTest;
  kind: FailureKind;
  location: SourceLocation | undefined;
  owners: string[];
}

/** How following the execution ended for the CLI: it ended, --timeout passed, or the CLI was stopped. */
export type FollowEnd = "ended" | "timed_out" | "interrupted";

/**
 * The check run's conclusion: an execution that passed (its quarantined failures included) is a success, one
 * that failed or errored a failure, a cancelled one cancelled; one still running when --timeout passed timed out,
 * and one the CLI stopped following (Ctrl-C, a cancelled job) neutral: it goes on, unjudged.
 */
export function conclusionOf(execution: Execution, end: FollowEnd): Conclusion {
  if (execution.status === "passed") return "success";
  if (execution.status === "failed" || execution.status === "errored") return "failure";
  if (execution.status === "cancelled") return "cancelled";
  return end === "timed_out" ? "timed_out" : "neutral";
}

/** GitHub's bounds on a check run's output and annotations (the checks API refuses more). */
const maxSummary = 65_535;
const maxAnnotationText = 64 * 1024;
const maxTableRows = 100;

const label: Record<FailureKind["kind"], string> = {
  new: "🆕 new",
  known: "🔁 known",
  flaky: "🎲 flaky",
  quarantined: "🔒 quarantined",
};

const cell = (text: string) =>
  text
    .replace(/\r?\n[\s\S]*$/, "")
    .replace(/[|\\`*_[\]<>]/g, (c) => `\\${c}`)
    .slice(0, 200);

const testName = (test: ReportedTest) => `${test.classname}.${test.name}`;

function kindCounts(failures: ClassifiedFailure[]): string {
  const counts = new Map<string, number>();
  for (const f of failures) counts.set(f.kind.kind, (counts.get(f.kind.kind) ?? 0) + 1);
  return (["new", "known", "flaky", "quarantined"] as const)
    .filter((k) => counts.has(k))
    .map((k) => `${counts.get(k)} ${k}`)
    .join(", ");
}

/** The check run's title: the execution's status and its counts, one line. */
export function checkTitle(execution: Execution, end: FollowEnd): string {
  const s = execution.summary;
  const state =
    end === "interrupted" && !["passed", "failed", "errored", "cancelled"].includes(execution.status)
      ? "not followed to its end"
      : end === "timed_out" && !["passed", "failed", "errored", "cancelled"].includes(execution.status)
        ? "still running when --timeout passed"
        : execution.status;
  return `${state}: ${s.failed} failed, ${s.passed} passed${s.flaky ? ` (${s.flaky} flaky)` : ""} of ${s.tests} tests`;
}

/** One execution's summary in Markdown: the check run's summary and the comment's section for it. */
export function executionSummary(
  execution: Execution,
  planName: string,
  failures: ClassifiedFailure[],
  baseUrl: string,
  end: FollowEnd,
): string {
  const out = [
    `#### ${cell(planName)}: ${checkTitle(execution, end)}`,
    "",
    `[${execution.id} on Testbay](${dashboardLink(baseUrl, execution.id)})${execution.version ? ` · ${cell(execution.package_name ?? "")} ${cell(execution.version)}` : ""}${failures.length ? ` · ${kindCounts(failures)}` : ""}`,
  ];
  if (end === "interrupted" && execution.status !== "passed")
    out.push("", `The CLI stopped following it; it goes on: \`testbay status ${execution.id} --wait\`.`);
  if (failures.length > 0) {
    out.push("", "| Test | Failure | Kind | Owners |", "|---|---|---|---|");
    for (const f of failures.slice(0, maxTableRows)) {
      const where = f.location
        ? ` ([${cell(f.location.path)}:${f.location.line}](${f.location.path}#L${f.location.line}))`
        : "";
      out.push(
        `| \`${cell(testName(f.test))}\`${where} | ${cell(f.test.message ?? f.test.status)} | ${label[f.kind.kind]} | ${f.owners.map(cell).join(" ") || "–"} |`,
      );
    }
    if (failures.length > maxTableRows)
      out.push(
        "",
        `… and ${failures.length - maxTableRows} more: [all on Testbay](${dashboardLink(baseUrl, execution.id)}).`,
      );
  }
  return out.join("\n");
}

/** Text cut to GitHub's bound, saying so. */
export function fitted(text: string, max = maxSummary): string {
  if (text.length <= max) return text;
  const note = "\n\n… cut here: the whole report is on Testbay.";
  return text.slice(0, max - note.length) + note;
}

/** One annotation per failure, on its source when found, saying its kind, owners and message. */
export function annotationOf(failure: ClassifiedFailure, fallbackPath: string) {
  const { test, kind, location, owners } = failure;
  const kindLine =
    kind.kind === "quarantined"
      ? "Quarantined: its failure does not fail the run (testbay tests release to undo)."
      : kind.kind === "flaky"
        ? `Flaky: ${kind.why}.`
        : kind.kind === "new"
          ? `New failure: ${kind.why}.`
          : `Known failure: ${kind.why}.`;
  const lines = [
    kindLine,
    ...(owners.length ? [`Owners: ${owners.join(" ")}`] : []),
    ...(location ? [] : ["(Its source file was not found under --source-root.)"]),
    "",
    test.message ?? `${test.status} without a message`,
  ];
  const level = kind.kind === "quarantined" ? "notice" : kind.kind === "flaky" ? "warning" : "failure";
  const line = location?.line ?? 1;
  return {
    path: location?.path ?? fallbackPath,
    start_line: line,
    end_line: line,
    annotation_level: level as "notice" | "warning" | "failure",
    title: `${label[kind.kind]}: ${testName(test)}`.slice(0, 255),
    message: fitted(lines.join("\n"), maxAnnotationText),
    ...(test.stack_trace ? { raw_details: fitted(test.stack_trace, maxAnnotationText) } : {}),
  };
}

export type Annotation = ReturnType<typeof annotationOf>;

/** GitHub takes at most 50 annotations a request; each update of a check run appends its own. */
export const annotationsPerRequest = 50;

export function inBatches<T>(items: T[], size = annotationsPerRequest): T[][] {
  const batches: T[][] = [];
  for (let i = 0; i < items.length; i += size) batches.push(items.slice(i, i + size));
  return batches;
}
