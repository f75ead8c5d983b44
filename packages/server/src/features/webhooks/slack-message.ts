/**
 * The Slack incoming-webhook body (`{text, blocks}`) for an event (API.md §9): what ended how, the app,
 * version and plan, the counts and a link to the run. `text` is what notifications show; `blocks` the message.
 */
interface Summary {
  tests?: number;
  passed?: number;
  failed?: number;
  flaky?: number;
  skipped?: number;
}

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

export function slackMessage(
  type: string,
  data: Record<string, unknown>,
  publicUrl: string | undefined,
): { text: string; blocks: unknown[] } {
  const text = headline(type, data, publicUrl);
  const fields = facts(type, data);
  const blocks: unknown[] = [{ type: "section", text: { type: "mrkdwn", text } }];
  if (fields.length > 0) {
    blocks.push({ type: "section", fields: fields.map((f) => ({ type: "mrkdwn", text: f })) });
  }
  return { text, blocks };
}

/** The dashboard's page of a run: the public URL without its /v1. */
function runLink(data: Record<string, unknown>, publicUrl: string | undefined): string | undefined {
  const id = str(data.id) ?? str(data.execution_id);
  if (!publicUrl || !id) return undefined;
  return `${publicUrl.replace(/\/v1$/, "")}/runs/${id}`;
}

function headline(type: string, data: Record<string, unknown>, publicUrl: string | undefined): string {
  const app = [str(data.package_name), str(data.version)].filter(Boolean).join(" ");
  const link = runLink(data, publicUrl);
  const run = link
    ? `<${link}|Run ${str(data.id) ?? str(data.execution_id)}>`
    : `Run ${str(data.id) ?? str(data.execution_id) ?? ""}`.trim();
  switch (type) {
    case "execution.finished":
      return `${run} of ${app || "an app"} ${str(data.status) ?? "finished"}`;
    case "execution.started":
      return `${run} of ${app || "an app"} started`;
    case "version.uploaded":
      return `Version ${app || "of an app"} uploaded`;
    case "test.flaky_detected": {
      const test = data.test as { classname?: string; name?: string } | undefined;
      const name = [test?.classname, test?.name].filter(Boolean).join(".");
      return `Test ${name || "(unnamed)"} turned flaky`;
    }
    case "webhook.test":
      return "Testbay test message: this webhook works";
    default:
      return `Testbay: ${type}`;
  }
}

function facts(type: string, data: Record<string, unknown>): string[] {
  const fields: string[] = [];
  if (str(data.package_name)) fields.push(`*App*\n${str(data.package_name)}`);
  if (str(data.version)) fields.push(`*Version*\n${str(data.version)}`);
  if (str(data.test_plan_id)) fields.push(`*Plan*\n${str(data.test_plan_id)}`);
  const summary = data.summary as Summary | undefined;
  if (type.startsWith("execution.") && summary && typeof summary.tests === "number") {
    fields.push(
      `*Tests*\n${summary.passed ?? 0} passed, ${summary.failed ?? 0} failed, ${summary.flaky ?? 0} flaky, ${summary.skipped ?? 0} skipped of ${summary.tests}`,
    );
  }
  if (typeof data.flaky_rate === "number") fields.push(`*Flaky rate*\n${Math.round(data.flaky_rate * 100)}%`);
  return fields;
}
