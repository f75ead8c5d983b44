import { type Execution, isFinal, type TestCase } from "../sdk/models.ts";
import { planLabel } from "./plan-label.ts";
import { type ProgressStream, wantsProgressBar } from "./progress.ts";

/** What a person sees while `run --wait` polls: a redrawn block on a terminal, a line per change elsewhere. */
export interface WaitView {
  update(executions: Execution[]): void;
  /** Leaves the last state on screen and the cursor below it. */
  stop(): void;
}

/** One execution in one line: status, device runs, tests so far, and why it waits when it does. */
export function executionLine(
  execution: Execution,
  names: Map<string, string> = new Map(),
  options: { waiting?: boolean } = {},
): string {
  const runs = execution.devices;
  const ended = runs.filter((d) => isFinal(d.status)).length;
  const running = runs.filter((d) => d.status === "running").length;
  const { failed } = execution.summary;
  const parts = [
    `${execution.id}  ${planLabel(execution, names)}  ${execution.status}`,
    `device runs ${ended}/${runs.length} ended${running ? `, ${running} running` : ""}`,
    `tests ${execution.summary.passed} passed${flakyNote(execution.summary)}, ${failed} failed`,
  ];
  const line = parts.join(" · ");
  return options.waiting !== false && execution.status === "queued" && execution.waiting_reason
    ? `${line} · waiting: ${execution.waiting_reason.detail}`
    : line;
}

/** " (1 flaky)" after the passed count: tests that passed only on a rerun (retry_failed_tests) are among them. */
function flakyNote(summary: Execution["summary"]): string {
  return summary.flaky > 0 ? ` (${summary.flaky} flaky)` : "";
}

const clip = (line: string, width: number) => (line.length > width ? `${line.slice(0, width - 1)}…` : line);

export function waitView(
  stream: ProgressStream & { columns?: number },
  env: Record<string, string | undefined>,
  names: Map<string, string> = new Map(),
): WaitView {
  if (!wantsProgressBar(stream, env)) {
    // CI logs: a line when an execution changes, never a redraw (escape codes are noise in a log).
    const last = new Map<string, string>();
    return {
      update(executions) {
        for (const execution of executions) {
          const line = executionLine(execution, names);
          if (last.get(execution.id) === line) continue;
          last.set(execution.id, line);
          stream.write(`  ${line}\n`);
        }
      },
      stop() {},
    };
  }
  let drawn = 0;
  return {
    update(executions) {
      // Lines are clipped to the terminal's width: a wrapped line would make the redraw miscount.
      const width = Math.max(20, (stream.columns ?? 120) - 1);
      // The waiting reason gets a line of its own: clipped at the end of a long line, it would be lost.
      const lines = executions.flatMap((e) => [
        clip(`  ${executionLine(e, names, { waiting: false })}`, width),
        ...(e.status === "queued" && e.waiting_reason
          ? [clip(`      waiting: ${e.waiting_reason.detail}`, width)]
          : []),
      ]);
      const up = drawn > 0 ? `\u001b[${drawn}F` : "";
      stream.write(`${up}\u001b[J${lines.join("\n")}\n`);
      drawn = lines.length;
    },
    stop() {
      drawn = 0;
    },
  };
}

/** The server's origin from its API base URL: where the dashboard is. */
export function dashboardOrigin(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
}

/** A run's page on the dashboard (its /runs/{id}; the older /executions/{id} links lead there too). */
export const dashboardLink = (baseUrl: string, executionId: string) =>
  `${dashboardOrigin(baseUrl)}/runs/${encodeURIComponent(executionId)}`;

/** The first lines of a stack trace: enough to see where, short enough for a log. */
export function stackHead(stack: string | null, lines = 4): string[] {
  if (!stack) return [];
  const all = stack.split(/\r?\n/).filter((l) => l.trim() !== "");
  const head = all.slice(0, lines).map((l) => l.trimEnd());
  if (all.length > lines)
    head.push(`… ${all.length - lines} more line${all.length - lines === 1 ? "" : "s"}`);
  return head;
}

export interface FinalReport {
  executions: Execution[];
  names: Map<string, string>;
  /** Failed and errored tests per execution ID. */
  failedTests: Map<string, { items: TestCase[]; more: boolean }>;
  baseUrl: string;
}

function deviceLabel(test: TestCase): string {
  const d = test.device;
  const what = [d.model, d.serial].filter(Boolean).join(" ");
  return what || (d.platform ? d.platform : "agent host");
}

/**
 * A failed test's one line: its status, how many tries it had when it was run again (retry_failed_tests, or
 * another attempt of its device run), and where it ran, with its shard when the execution was sharded.
 */
export function failedTestLine(test: TestCase, sharded: boolean): string {
  const tries = test.attempts.length > 1 ? ` on all ${test.attempts.length} tries` : "";
  const shard = sharded ? `, shard ${test.shard + 1}` : "";
  return `  ✗ ${test.classname}.${test.name} (${test.status}${tries}, ${deviceLabel(test)}${shard})`;
}

const nonBlankLines = (text: string | null) => (text ?? "").split(/\r?\n/).filter((l) => l.trim() !== "");

/**
 * The stack's head, without the lines that only repeat the message. A JVM stack begins with "Type: message",
 * the message's every line included, before its first frame: the type is worth its line, the rest is said.
 */
function stackAfterMessage(test: TestCase): string[] {
  const stack = nonBlankLines(test.stack_trace);
  const message = nonBlankLines(test.message).map((l) => l.trim());
  const first = stack[0]?.trim();
  const kept =
    first === undefined || message[0] === undefined
      ? null
      : first === message[0]
        ? []
        : first.endsWith(`: ${message[0]}`)
          ? stack.slice(0, 1)
          : null;
  if (kept === null) return stackHead(test.stack_trace);
  let after = 1;
  while (after < Math.min(stack.length, message.length) && stack[after]?.trim() === message[after]) after++;
  return stackHead([...kept, ...stack.slice(after)].join("\n"));
}

/**
 * Lines of a failure message shown under its test; the rest is counted, with where to read it whole. Not one:
 * an iOS launch failure says "Failed to launch app with identifier: … and options: {", its options, "}" and
 * only then why; a short assertion diff fits whole.
 */
const MESSAGE_LINES = 5;

/** A failure message's first lines, then how many more there are and where the whole message is. */
function messageHead(test: TestCase, executionId: string): string[] {
  const lines = nonBlankLines(test.message).map((l) => l.trimEnd());
  const more = lines.length - MESSAGE_LINES;
  if (more <= 0) return lines;
  return [
    ...lines.slice(0, MESSAGE_LINES),
    `… ${more} more line${more === 1 ? "" : "s"}: testbay junit ${executionId} has the whole message`,
  ];
}

/**
 * Told of a failed test whose details this CLI cannot read (a newer server's shape): the report names the test
 * and goes on, and the caller warns once.
 */
export type OnUnreadable = (executionId: string, error: unknown) => void;

/** The lines `describe` makes of a test, or its name alone when its details cannot be read. */
function testLines(
  test: TestCase,
  executionId: string,
  onUnreadable: OnUnreadable | undefined,
  describe: () => string[],
) {
  try {
    return describe();
  } catch (error) {
    onUnreadable?.(executionId, error);
    return [
      `  ✗ ${String(test?.classname)}.${String(test?.name)} (details unreadable: see testbay junit ${executionId})`,
    ];
  }
}

/** What happened, for a person at a terminal or a CI log: failed tests with why, waits with why, links. */
export function finalReportText(report: FinalReport, onUnreadable?: OnUnreadable): string {
  const out: string[] = [];
  for (const execution of report.executions) {
    const failed = report.failedTests.get(execution.id);
    if (!failed || failed.items.length === 0) continue;
    out.push(`Failed in ${execution.id} ${planLabel(execution, report.names)}:`);
    const sharded = (execution.devices ?? []).some((device) => (device.shard ?? 0) > 0);
    for (const test of failed.items) {
      out.push(
        ...testLines(test, execution.id, onUnreadable, () => [
          failedTestLine(test, sharded),
          ...messageHead(test, execution.id).map((l) => `      ${l}`),
          ...stackAfterMessage(test).map((l) => `        ${l.trim()}`),
        ]),
      );
    }
    if (failed.more) out.push(`  … more: testbay junit ${execution.id}`);
  }
  for (const execution of report.executions) {
    if (execution.status === "queued" && execution.waiting_reason) {
      out.push(
        `Still queued: ${execution.id} ${planLabel(execution, report.names)}: ${execution.waiting_reason.detail}`,
      );
    }
  }
  out.push("On the dashboard:");
  for (const execution of report.executions) {
    out.push(`  ${execution.id}  ${execution.status}  ${dashboardLink(report.baseUrl, execution.id)}`);
  }
  return `${out.join("\n")}\n`;
}

const md = (text: string) => text.replace(/[|\\`*_[\]<>]/g, (c) => `\\${c}`);

/** The same report as GitHub-flavoured Markdown, for the job summary (GITHUB_STEP_SUMMARY). */
export function finalReportMarkdown(report: FinalReport, title: string, onUnreadable?: OnUnreadable): string {
  const out = [
    `### ${md(title)}`,
    "",
    "| Execution | Plan | Status | Tests | Passed | Failed |",
    "|---|---|---|---|---|---|",
  ];
  for (const e of report.executions) {
    out.push(
      `| [${md(e.id)}](${dashboardLink(report.baseUrl, e.id)}) | ${md(planLabel(e, report.names))} | ${e.status} | ${e.summary.tests} | ${e.summary.passed}${flakyNote(e.summary)} | ${e.summary.failed} |`,
    );
  }
  for (const e of report.executions) {
    if (e.status === "queued" && e.waiting_reason)
      out.push("", `**${md(e.id)} still queued:** ${md(e.waiting_reason.detail)}`);
  }
  for (const e of report.executions) {
    const failed = report.failedTests.get(e.id);
    if (!failed || failed.items.length === 0) continue;
    out.push("", `#### Failed in ${md(e.id)} ${md(planLabel(e, report.names))}`, "");
    for (const test of failed.items) {
      out.push(
        ...testLines(test, e.id, onUnreadable, () => {
          const body = [test.message ?? "", ...stackHead(test.stack_trace, 10)].filter(Boolean).join("\n");
          // A fence longer than any backtick run inside keeps the text verbatim.
          const fence = "`".repeat(Math.max(3, ...[...body.matchAll(/`+/g)].map((m) => m[0].length + 1)));
          return [
            `<details><summary>❌ ${md(`${test.classname}.${test.name}`)} (${md(deviceLabel(test))})</summary>`,
            "",
            fence,
            body,
            fence,
            "",
            "</details>",
          ];
        }),
      );
    }
  }
  return `${out.join("\n")}\n`;
}
