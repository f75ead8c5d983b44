import { randomUUID } from "node:crypto";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { ExecutionParams } from "../executions/executions.schemas.ts";
import { ctrfReport, ctrfSpecVersion } from "./ctrf-report.ts";
import { reportHtml } from "./report-html.ts";
import { reportResponsePolicy } from "./report-page-assets.ts";
import type { ReportSource } from "./report-source.ts";

/** The top of a CTRF document; the rest is as CTRF's JSON schema says (ctrf-report.ts). */
const CtrfDocument = Type.Object(
  {
    reportFormat: Type.Literal("CTRF"),
    specVersion: Type.String({ description: `CTRF's spec version, ${ctrfSpecVersion}` }),
    reportId: Type.String({ format: "uuid", description: "New for each document" }),
    runId: Type.String({ description: "The execution's ID" }),
    timestamp: Type.String({ format: "date-time" }),
    generatedBy: Type.String(),
    results: Type.Object(
      {
        tool: Type.Object({ name: Type.String() }, { additionalProperties: true }),
        summary: Type.Object(
          {
            tests: Type.Integer(),
            passed: Type.Integer(),
            failed: Type.Integer(),
            skipped: Type.Integer(),
            pending: Type.Integer(),
            other: Type.Integer(),
            start: Type.Integer(),
            stop: Type.Integer(),
          },
          { additionalProperties: true },
        ),
        tests: Type.Array(Type.Object({}, { additionalProperties: true })),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);

/** The report to share and the CTRF document (API.md §16), read as the execution's other results are. */
export const reportsRoutes: FastifyPluginAsyncTypebox<{ source: ReportSource }> = async (app, { source }) => {
  app.get(
    "/v1/executions/:id/report.html",
    {
      schema: {
        summary: "The execution as one self-contained HTML report to share",
        description:
          "One HTML file that needs nothing else: style, script and screenshot thumbnails inline, no request to anywhere when opened (a Content-Security-Policy on the response and in the page allows none). The summary (plan, app, version, status, durations, CI metadata), the device runs, every failed test with its message, stack trace, tries, screenshot (PNG screenshots shrunk to thumbnails at most 180 px wide) and failure group, and all tests with their durations. At most about 5 MB for a run of 5,000 tests: what does not fit (more screenshots, the traces of very many failures, very long names) is cut, and the page says what and where. Served inline, sandboxed (CSP sandbox allow-scripts).",
        tags: ["executions"],
        params: ExecutionParams,
        produces: ["text/html"],
        response: { 200: Type.String(), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { organizationId } = principalOf(request);
      const model = await source.model(organizationId, request.params.id, { withScreenshots: true });
      return reply
        .type("text/html; charset=utf-8")
        .header("content-security-policy", reportResponsePolicy)
        .header("x-content-type-options", "nosniff")
        .header("referrer-policy", "no-referrer")
        .header("content-disposition", `inline; filename="testbay-report-${model.execution.id}.html"`)
        .send(reportHtml(model));
    },
  );

  app.get(
    "/v1/executions/:id/ctrf",
    {
      schema: {
        summary: "The execution in the Common Test Report Format (CTRF JSON)",
        description: `A CTRF document (spec version ${ctrfSpecVersion}) for the reporters that read it: one test per test case of each device run, with its suite (device, class), device, duration, message, trace, earlier tries (retryAttempts), flaky, and its artifacts as attachments (their download paths). errored is failed with rawStatus errored; a quarantined test that failed is skipped with rawStatus failed and the tag quarantined, as in the JUnit report. environment carries the app, version and CI metadata.`,
        tags: ["executions"],
        params: ExecutionParams,
        response: { 200: CtrfDocument, ...ProblemResponses },
      },
    },
    async (request) => {
      const { organizationId } = principalOf(request);
      const model = await source.model(organizationId, request.params.id, { withScreenshots: false });
      return ctrfReport(model, randomUUID());
    },
  );
};
