import type { operations } from "./api.generated.ts";
import { segment, type Transport } from "./transport.ts";

/** An execution in the Common Test Report Format (API.md §16; CTRF spec 0.0.0). */
export type CtrfReport = operations["getExecutionCtrf"]["responses"][200]["content"]["application/json"];

/**
 * An execution's reports to share (API.md §16) as typed calls over a Testbay's transport
 * (`reportsApi(testbay.transport)`): the token, pacing and retry rules of every other call apply (CLIENT.md's
 * rules); both are reads, so retried like any GET.
 *
 * @example
 * const reports = reportsApi(testbay.transport);
 * await writeFile("report.html", await reports.html(executionId));
 */
export function reportsApi(transport: Transport) {
  return {
    /**
     * `GET /executions/{id}/report.html`: one self-contained HTML file (summary, device runs, failures with
     * their screenshots as thumbnails, all tests) that opens from disk and loads nothing from anywhere.
     */
    html: async (executionId: string): Promise<string> => {
      const response = await transport.send({
        method: "GET",
        path: `/executions/${segment(executionId)}/report.html`,
        headers: { accept: "text/html" },
      });
      return response.text();
    },
    /** `GET /executions/{id}/ctrf`: the execution as a CTRF JSON document, for the tools that read CTRF. */
    ctrf: async (executionId: string): Promise<CtrfReport> =>
      (
        await transport.json<CtrfReport>({
          method: "GET",
          path: `/executions/${segment(executionId)}/ctrf`,
        })
      ).body,
  };
}

export type ReportsApi = ReturnType<typeof reportsApi>;
