/**
 * The report to share (API.md §16, GET /executions/{id}/report.html): one HTML file that holds everything it
 * shows (style, script and screenshot thumbnails inline) and asks for nothing when opened from disk. Its parts:
 * the summary, the device runs, every failed test with its message, stack, tries, screenshot and failure group,
 * and all tests with their durations.
 *
 * Size: ≤ 5 MB for a run of 5,000 tests. Each part has a share of that (`budget`), in bytes of the page as
 * written: thumbnails (report-source.ts keeps to theirs), the failures, and the table of all tests. What does
 * not fit is cut, and the page says so where it was cut and in its footer.
 */
import type { DeviceRunRecord } from "../executions/index.ts";
import type { TestCaseView } from "../executions/test-case-view.ts";
import { html, htmlCut } from "./html-text.ts";
import { isFailure, type ReportModel, testCaseKey } from "./report-model.ts";
import { reportPolicy, reportScript, reportStyle } from "./report-page-assets.ts";

/** Bytes of the page for each part; with the summary, device runs and assets they stay under 5 MB. */
export const budget = {
  /** Screenshot thumbnails as data: URIs (report-source.ts). */
  thumbnails: 1_400_000,
  /** Every failed test's message, stack and tries. */
  failures: 1_500_000,
  /** The table of all tests. */
  allTests: 1_900_000,
};

/** Per failed test, while the failures' share lasts. */
const perFailure = { message: 2_000, stackLines: 60, stack: 6_000, name: 600, tryMessage: 300, tries: 10 };
/** The first failures show their stack trace open; the rest one click away. */
const openStacks = 10;
/** A failed test shown after the failures' share ran out: its name and the start of its message. */
const compactFailure = { name: 200, message: 200 };

export function reportHtml(model: ReportModel): string {
  const { execution } = model;
  const cuts: string[] = [];
  const planName = typeof execution.plan.name === "string" ? execution.plan.name : null;
  const title = `${planName ?? execution.testPlanId ?? execution.id} · ${execution.status}`;
  const failures = model.tests.filter(isFailure);
  const body = [
    header(model, planName),
    summary(model),
    deviceRuns(model.execution.deviceRuns, model.tests),
    failuresSection(model, failures, cuts),
    allTestsSection(model.tests, cuts),
    footer(model, cuts),
  ].join("\n");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${html(reportPolicy)}">
<meta name="referrer" content="no-referrer">
<meta name="generator" content="Testbay">
<title>${htmlCut(`Testbay report: ${title}`, 300).html}</title>
<style>${reportStyle}</style>
</head>
<body>
${body}
<script>${reportScript}</script>
</body>
</html>
`;
}

/** A person's email; a client's name with its ID, as the dashboard shows it, or its ID alone. */
function triggeredBy({ execution, triggeredByName }: ReportModel): string {
  if (execution.triggeredByPerson) return execution.triggeredByPerson;
  return triggeredByName ? `${triggeredByName} (${execution.triggeredBy})` : execution.triggeredBy;
}

function badge(status: string, text = status): string {
  return `<span class="badge s-${html(status)}">${html(text)}</span>`;
}

/** "2026-11-28 16:20:02 UTC": read the same wherever the file is opened. */
export function timeText(iso: string | null): string {
  if (!iso) return "–";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** 850 ms, 12.3 s, 4 min 05 s, 1 h 02 min. */
export function durationText(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || ms < 0) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, "0")} s`;
  return `${Math.floor(seconds / 3600)} h ${String(Math.floor((seconds % 3600) / 60)).padStart(2, "0")} min`;
}

const between = (from: string | null, to: string | null) =>
  from && to ? new Date(to).getTime() - new Date(from).getTime() : null;

function header(model: ReportModel, planName: string | null): string {
  const { execution } = model;
  const app = [execution.packageName, execution.version].filter(Boolean).join(" ");
  return `<header class="top">
<div class="eyebrow">Testbay test report · ${html(execution.id)}</div>
<h1>${htmlCut(planName ?? "Untitled plan", 400).html} ${badge(execution.status)}</h1>
<p class="sub">${app ? htmlCut(app, 400).html : "No app"} · ${timeText(execution.createdAt)}</p>
</header>
<main>`;
}

function summary(model: ReportModel): string {
  const { execution } = model;
  const s = execution.summary;
  const count = (value: number, label: string, tone = "") =>
    `<div class="count${tone ? ` ${tone}` : ""}"><b>${value}</b><span>${label}</span></div>`;
  const quarantined = s.quarantined_failures ?? 0;
  const ci = execution.ci ?? {};
  const facts: Array<[string, string]> = [
    ["Status", badge(execution.status)],
    ["Test plan", html(`${execution.plan.name ?? "–"} (${execution.testPlanId ?? "no plan"})`)],
    ["App", html(execution.packageName ?? "–")],
    ["Version", html(execution.version ?? "–")],
    ["Created", timeText(execution.createdAt)],
    ["Started", timeText(execution.startedAt)],
    ["Finished", timeText(execution.finishedAt)],
    ["Waited in queue", durationText(between(execution.createdAt, execution.startedAt))],
    ["Ran for", durationText(between(execution.startedAt, execution.finishedAt))],
    ["Triggered by", html(triggeredBy(model))],
  ];
  if (ci.provider) facts.push(["CI", html(ci.provider)]);
  if (ci.branch) facts.push(["Branch", htmlCut(ci.branch, 300).html]);
  if (ci.commit) facts.push(["Commit", htmlCut(ci.commit, 300).html]);
  if (ci.pull_request) facts.push(["Pull request", htmlCut(ci.pull_request, 300).html]);
  if (ci.build_url) facts.push(["Build", buildLink(ci.build_url)]);
  return `<section class="card" id="summary">
<h2>Summary</h2>
<div class="counts">
${count(s.tests, "tests")}${count(s.passed, "passed", "good")}${count(s.failed, "failed", s.failed > 0 ? "bad" : "")}${count(s.skipped, "skipped")}${count(s.flaky, "flaky", s.flaky > 0 ? "warn" : "")}${quarantined > 0 ? count(quarantined, "quarantined failures", "warn") : ""}
</div>
<dl class="facts">
${facts.map(([term, value]) => `<dt>${term}</dt><dd>${value}</dd>`).join("\n")}
</dl>
</section>`;
}

/** The CI build's page, as a link only when it is an http(s) address (a javascript: URL is shown as text). */
function buildLink(url: string): string {
  const text = htmlCut(url, 500).html;
  return /^https?:\/\//i.test(url) && url.length <= 2000
    ? `<a href="${html(url)}" rel="noopener noreferrer">${text}</a>`
    : text;
}

function deviceText(device: Record<string, unknown> | null): string {
  if (!device) return "agent host";
  const part = (key: string) => (typeof device[key] === "string" ? (device[key] as string) : "");
  const platform = part("platform");
  const os = part("os_version");
  const named = [part("model") || part("name"), platform && `${platform}${os ? ` ${os}` : ""}`]
    .filter(Boolean)
    .join(", ");
  const serial = part("serial");
  return `${named || "any device"}${serial ? ` (${serial})` : ""}`;
}

function runLabel(run: Pick<DeviceRunRecord, "position" | "shard" | "shardCount">): string {
  const shards = run.shardCount ?? 1;
  return `${run.position + 1}${shards > 1 ? ` · shard ${(run.shard ?? 0) + 1}/${shards}` : ""}`;
}

function deviceRuns(runs: readonly DeviceRunRecord[], tests: readonly TestCaseView[]): string {
  const rows = runs.map((run) => {
    const mine = tests.filter((t) => t.device.position === run.position && t.shard === (run.shard ?? 0));
    const failed = mine.filter(isFailure).length;
    const passed = mine.filter((t) => t.status === "passed").length;
    return `<tr><td class="num">${html(runLabel(run))}</td><td class="name">${htmlCut(deviceText(run.claimedDevice ?? run.device), 300).html}</td><td>${badge(run.status)}</td><td class="num">${run.attempt}</td><td class="num">${mine.length}</td><td class="num">${passed}</td><td class="num">${failed}</td><td class="num">${durationText(between(run.startedAt, run.finishedAt))}</td><td class="hide-narrow">${run.reason ? htmlCut(run.reason, 500).html : ""}</td></tr>`;
  });
  return `<section class="card" id="devices">
<h2>Device runs (${runs.length})</h2>
<div class="scroll"><table>
<thead><tr><th class="num">#</th><th>Device</th><th>Status</th><th class="num">Attempt</th><th class="num">Tests</th><th class="num">Passed</th><th class="num">Failed</th><th class="num">Took</th><th class="hide-narrow">Reason</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody></table></div>
</section>`;
}

/** The device of a test as its row says it: its run's number, and the model when the run has one. */
function testDevice(test: TestCaseView): string {
  const model = test.device.model ?? test.device.platform ?? "";
  return `${test.device.position + 1}${test.shard > 0 ? `·${test.shard + 1}` : ""}${model ? ` ${model}` : ""}`;
}

/** The first lines of a stack trace: where it failed is at the top; the rest is the framework. */
function stackHead(stack: string): { text: string; more: number } {
  const lines = stack.split("\n");
  return {
    text: lines.slice(0, perFailure.stackLines).join("\n"),
    more: Math.max(0, lines.length - perFailure.stackLines),
  };
}

function failuresSection(model: ReportModel, failures: TestCaseView[], cuts: string[]): string {
  if (failures.length === 0) {
    return `<section class="card" id="failures"><h2>Failures</h2><p>No test failed.</p></section>`;
  }
  let left = budget.failures;
  const full: string[] = [];
  const compact: string[] = [];
  let notListed = 0;
  failures.forEach((test, index) => {
    if (left > 0 && compact.length === 0) {
      const part = failureArticle(model, test, index);
      if (Buffer.byteLength(part) <= left) {
        full.push(part);
        left -= Buffer.byteLength(part);
        return;
      }
    }
    const line = compactFailureLine(test, index);
    if (Buffer.byteLength(line) <= left) {
      compact.push(line);
      left -= Buffer.byteLength(line);
    } else notListed++;
  });
  if (compact.length > 0) {
    cuts.push(
      `${compact.length} failed tests are listed with the start of their message only (no stack, tries or screenshot): GET /v1/executions/${model.execution.id}/tests?status=failed has them whole.`,
    );
  }
  if (notListed > 0) {
    cuts.push(
      `${notListed} failed tests are not in the failures part; each is in the table of all tests (filter Failed).`,
    );
  }
  return `<section class="card" id="failures">
<h2>Failures (${failures.length})</h2>
${failureGroups(model, failures)}
${full.join("\n")}
${compact.length > 0 ? `<p class="note">Shown in short to keep this file small:</p><ul class="groups">${compact.join("\n")}</ul>` : ""}
${notListed > 0 ? `<p class="note">${notListed} more failed tests: see All tests, Failed.</p>` : ""}
</section>`;
}

/** The failures' groups (API.md §16), most tests first, each linking to its first failure. */
function failureGroups(model: ReportModel, failures: TestCaseView[]): string {
  if (model.groups === null) {
    return `<p class="note">Failure groups: this server does not group failures yet.</p>`;
  }
  const groups = new Map<string, { title: string; tests: number; first: number }>();
  failures.forEach((test, index) => {
    const group = model.groups?.get(testCaseKey(test));
    if (!group) return;
    const known = groups.get(group.signature);
    if (known) known.tests++;
    else groups.set(group.signature, { title: group.title, tests: 1, first: index });
  });
  if (groups.size === 0) return "";
  const items = [...groups.values()]
    .sort((a, b) => b.tests - a.tests || a.first - b.first)
    .slice(0, 50)
    .map(
      (g) =>
        `<li><a href="#f-${g.first}">${htmlCut(g.title, 400).html}</a> <span class="note">· ${g.tests} test${g.tests === 1 ? "" : "s"}</span></li>`,
    );
  return `<h3>Failure groups (${groups.size})</h3><ul class="groups">${items.join("\n")}</ul>`;
}

function failureArticle(model: ReportModel, test: TestCaseView, index: number): string {
  const quarantine = model.quarantines.get(test.id);
  const group = model.groups?.get(testCaseKey(test));
  const badges = [
    badge(test.status),
    test.flaky ? badge("flaky") : "",
    quarantine ? badge("quarantined") : "",
  ].join(" ");
  const meta = [
    `Device ${html(testDevice(test))}`,
    `attempt ${test.attempt}`,
    durationText(test.duration_ms),
    group ? `group: ${htmlCut(group.title, 400).html}` : "",
  ].filter(Boolean);
  const message = test.message
    ? `<pre class="message">${htmlCut(test.message, perFailure.message).html}</pre>`
    : `<p class="note">No message.</p>`;
  const stack = test.stack_trace ? stackHead(test.stack_trace) : null;
  const stackPart = stack
    ? `<details${index < openStacks ? " open" : ""}><summary>Stack trace</summary><pre>${htmlCut(stack.text, perFailure.stack).html}${stack.more > 0 ? `\n… ${stack.more} more lines` : ""}</pre></details>`
    : "";
  const tries =
    test.attempts.length > 1
      ? `<details><summary>Tries (${test.attempts.length})</summary><ol class="tries">${test.attempts
          .slice(-perFailure.tries)
          .map(
            (t) =>
              `<li>attempt ${t.attempt}${t.retry > 0 ? `, rerun ${t.retry}` : ""}: ${badge(t.status)} ${durationText(t.duration_ms)}${t.message ? ` · ${htmlCut(t.message.split("\n", 1)[0] ?? "", perFailure.tryMessage).html}` : ""}</li>`,
          )
          .join("")}</ol></details>`
      : "";
  const quarantineNote = quarantine
    ? `<p class="note">Quarantined by ${htmlCut(quarantine.quarantinedBy, 200).html}: ${htmlCut(quarantine.reason, 300).html}. It did not fail the run.</p>`
    : "";
  return `<article class="failure${quarantine ? " quarantined" : ""}" id="f-${index}">
<div class="body">
<h3>${htmlCut(test.name, perFailure.name).html} ${badges}</h3>
<div class="meta"><span class="cls">${htmlCut(test.classname, perFailure.name).html}</span><br>${meta.join(" · ")}</div>
${quarantineNote}${message}${stackPart}${tries}
</div>
${screenshot(model, test)}
</article>`;
}

function screenshot(model: ReportModel, test: TestCaseView): string {
  const shot = model.screenshots.get(testCaseKey(test));
  if (!shot) return "";
  const name = htmlCut(shot.name, 200).html;
  if (shot.kind === "left-out") {
    return `<figure class="shot"><figcaption>${name}: ${html(shot.why)}</figcaption></figure>`;
  }
  return `<figure class="shot"><img src="${shot.dataUri}"${shot.width > 0 ? ` width="${shot.width}" height="${shot.height}"` : ""} alt="Screenshot ${name}"><figcaption>${name}</figcaption></figure>`;
}

function compactFailureLine(test: TestCaseView, index: number): string {
  const message = (test.message ?? "").split("\n", 1)[0] ?? "";
  return `<li id="f-${index}">${badge(test.status)} <b>${htmlCut(test.name, compactFailure.name).html}</b> <span class="cls">${htmlCut(test.classname, compactFailure.name).html}</span>${message ? ` · ${htmlCut(message, compactFailure.message).html}` : ""}</li>`;
}

function allTestsSection(tests: readonly TestCaseView[], cuts: string[]): string {
  let left = budget.allTests;
  let cutNames = 0;
  const rows = tests.map((test, index) => {
    const open = `<tr data-status="${html(test.status)}" data-ms="${test.duration_ms ?? 0}"><td class="name">`;
    const device = htmlCut(testDevice(test), 80).html;
    const rest = `<span class="narrow-only"> · ${device}</span></div></td><td class="hide-narrow">${device}</td><td>${badge(test.status)}${test.flaky ? ` ${badge("flaky")}` : ""}</td><td class="num">${durationText(test.duration_ms)}</td></tr>`;
    // What is left of this part, shared among the rows still to come, is what this row's names may take.
    const forNames = Math.max(
      120,
      Math.floor(left / (tests.length - index)) - open.length - rest.length - 30,
    );
    const name = htmlCut(test.name, Math.floor(forNames * 0.6));
    const classname = htmlCut(test.classname, Math.floor(forNames * 0.4));
    if (name.cut || classname.cut) cutNames++;
    const row = `${open}${name.html}<div class="cls">${classname.html}${rest}`;
    left -= Buffer.byteLength(row);
    return row;
  });
  if (cutNames > 0) cuts.push(`${cutNames} long test names are cut in the table of all tests.`);
  const counts = new Map<string, number>();
  for (const t of tests) counts.set(t.status, (counts.get(t.status) ?? 0) + 1);
  const filters = ["all", "failed", "errored", "passed", "skipped"]
    .filter((s) => s === "all" || counts.has(s))
    .map(
      (s) =>
        `<button type="button" data-status-filter="${s}" aria-pressed="${s === "all"}">${s === "all" ? "All" : `${s[0]?.toUpperCase()}${s.slice(1)}`} ${s === "all" ? tests.length : counts.get(s)}</button>`,
    )
    .join("");
  return `<section class="card" id="tests">
<h2>All tests (<span id="shown-count">${tests.length}</span>)</h2>
<div class="controls"><input id="test-search" type="search" placeholder="Find a test" aria-label="Find a test">${filters}<button type="button" id="sort-duration" aria-pressed="false">Slowest first</button></div>
<div class="scroll"><table id="all-tests">
<thead><tr><th>Test</th><th class="hide-narrow">Device</th><th>Status</th><th class="num">Duration</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody></table></div>
</section>`;
}

function footer(model: ReportModel, cuts: string[]): string {
  const shots = [...model.screenshots.values()];
  const leftOut = shots.filter((s) => s.kind === "left-out").length;
  const notes = [...cuts];
  if (leftOut > 0) {
    notes.push(
      `${leftOut} screenshots are not shown (each says why); GET /v1/executions/${model.execution.id}/artifacts has them.`,
    );
  }
  return `</main>
<footer>
<p>Made by Testbay on ${timeText(model.generatedAt)} from execution ${html(model.execution.id)}. This file needs nothing else: it loads nothing from anywhere. Screenshots are small thumbnails (at most ${180} pixels wide); the full images stay on the server.</p>
${notes.map((note) => `<p>${html(note)}</p>`).join("\n")}
</footer>`;
}
