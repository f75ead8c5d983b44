import { Readable } from "node:stream";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { type TSchema, Type } from "typebox";
import { ApiError } from "../../errors.ts";
import { decodeCursor, encodeCursor } from "../../http/pagination.ts";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { sendStoredFile } from "../../http/send-stored-file.ts";
import type { BlobStore } from "../../storage/index.ts";
import { ExecutionId, ExecutionParams } from "./executions.schemas.ts";
import type { ExecutionsService } from "./executions.service.ts";
import { type JunitQuarantine, junitReport } from "./junit-report.ts";
import type { LogStore } from "./log-store.ts";
import type { ResultsRepo } from "./results.repo.ts";
import { servedContentType } from "./served-content-type.ts";
import { testCaseViews } from "./test-case-view.ts";

export const ArtifactView = Type.Object({
  name: Type.String(),
  device: Type.Integer({
    description: "Position of the device run in the plan's devices (0 for a host run)",
  }),
  shard: Type.Integer({
    description: "The device run's shard of that device entry (0 unless its step has `shards`)",
  }),
  attempt: Type.Integer(),
  size_bytes: Type.Integer(),
  sha256: Type.String(),
  content_type: Type.String(),
  created_at: Type.String({ format: "date-time" }),
  url: Type.String(),
});

const TestStatus = Type.Union(["passed", "failed", "errored", "skipped"].map((s) => Type.Literal(s)));
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const TestCaseItem = Type.Object({
  id: Type.String({ description: "The test's id within its plan, the same in every execution of the plan" }),
  classname: Type.String(),
  name: Type.String(),
  status: TestStatus,
  flaky: Type.Boolean(),
  quarantined: Type.Boolean(),
  duration_ms: Nullable(Type.Integer()),
  message: Nullable(Type.String()),
  stack_trace: Nullable(Type.String()),
  device: Type.Object({
    position: Type.Integer({ description: "The device run's position in the plan's devices" }),
    platform: Nullable(Type.String()),
    serial: Nullable(Type.String()),
    model: Nullable(Type.String()),
    os_version: Nullable(Type.String()),
  }),
  shard: Type.Integer(),
  attempt: Type.Integer({ description: "The device run attempt its status comes from" }),
  attempts: Type.Array(
    Type.Object({
      attempt: Type.Integer({ description: "The device run attempt of this try" }),
      retry: Type.Integer({
        description:
          "0 the test's first run in that attempt, 1.. its reruns alone there (retry_failed_tests)",
      }),
      status: TestStatus,
      duration_ms: Nullable(Type.Integer()),
      message: Nullable(Type.String()),
      artifacts: Type.Array(Type.String(), { description: "Names of the artifacts captured for this try" }),
    }),
    { description: "Every try of the test, by attempt and then by retry; the last one gives its status" },
  ),
  artifacts: Type.Array(Type.String(), { description: "Names of the artifacts captured for this test" }),
  video_offset_ms: Nullable(
    Type.Integer({
      description:
        "How far into its video segment (the .mp4 among artifacts) the test failed, in ms, as the agent measured it; null without video",
    }),
  ),
});

const TestCasePage = Type.Object({ items: Type.Array(TestCaseItem), next_cursor: Nullable(Type.String()) });

const TestCasesQuery = Type.Object(
  {
    status: Type.Optional(TestStatus),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: "next_cursor of the previous page" })),
  },
  { additionalProperties: false },
);

const ArtifactQuery = Type.Object(
  {
    device: Type.Optional(Type.Integer({ minimum: 0, maximum: 19 })),
    shard: Type.Optional(Type.Integer({ minimum: 0, maximum: 49 })),
    attempt: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
  },
  { additionalProperties: false },
);

/** Which tests of a plan are quarantined now (features/tests), for the `quarantined` of each test case. */
export interface QuarantinedTests {
  ofPlan(organizationId: string, testPlanId: string): Promise<ReadonlyMap<string, JunitQuarantine>>;
}

/** What agents reported, for people and CI: the merged JUnit report, the log and the artifacts. */
export const resultsRoutes: FastifyPluginAsyncTypebox<{
  executions: ExecutionsService;
  results: ResultsRepo;
  logs: LogStore;
  store: BlobStore;
  quarantines?: QuarantinedTests;
}> = async (app, { executions, results, logs, store, quarantines }) => {
  app.get(
    "/v1/executions/:id/junit",
    {
      schema: {
        summary: "The execution's test results as one JUnit XML file",
        description:
          "A testsuite per device run with its latest attempt's test cases; failures of earlier attempts appear as flakyFailure (passed in the end) or rerunFailure. A failed test that is quarantined (PUT /v1/tests/{test_id}/quarantine) is `<skipped>` with a message naming the quarantine and the failure, its stack trace in `<system-err>`, so that publishing the report does not fail a CI job the execution did not fail.",
        tags: ["executions"],
        params: ExecutionParams,
        produces: ["application/xml"],
        response: { 200: Type.String(), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { organizationId } = principalOf(request);
      const execution = await executions.get(organizationId, request.params.id);
      const quarantined = await (execution.testPlanId === null
        ? undefined
        : quarantines?.ofPlan(organizationId, execution.testPlanId));
      const report = junitReport(execution, await results.testCases(execution.id), quarantined);
      return reply.type("application/xml; charset=utf-8").send(report);
    },
  );

  app.get(
    "/v1/executions/:id/tests",
    {
      schema: {
        summary: "The execution's test cases",
        description:
          "One item per test of each device run, in the order they ran: its final status (from the last try of the run's latest attempt), message and stack trace, the device, every try (`attempts`: each attempt of the device run, and each rerun alone within one when the plan has retry_failed_tests, with its own artifacts), and the names of the artifacts captured for its final try (GET …/artifacts/{name}?device={device.position}&shard={shard}&attempt={attempt}). `flaky`: it failed on an earlier try and passed in the end. `quarantined`: the test is quarantined now (PUT /v1/tests/{test_id}/quarantine), whatever it was when this execution ran. ?status= filters.",
        tags: ["executions"],
        params: ExecutionParams,
        querystring: TestCasesQuery,
        response: { 200: TestCasePage, ...ProblemResponses },
      },
    },
    async (request) => {
      const { organizationId } = principalOf(request);
      const execution = await executions.get(organizationId, request.params.id);
      const { status, limit = 100, cursor } = request.query;
      const quarantined = await (execution.testPlanId === null
        ? undefined
        : quarantines?.ofPlan(organizationId, execution.testPlanId));
      const all = testCaseViews(
        execution,
        await results.testCases(execution.id),
        new Set(quarantined?.keys()),
      );
      const listed = status === undefined ? all : all.filter((view) => view.status === status);
      const after = decodeCursor(cursor);
      const start =
        after === undefined
          ? 0
          : listed.findIndex((v) => String(v.device.position) === after.createdAt && v.id === after.id) + 1;
      const items = listed.slice(start, start + limit);
      const last = items.at(-1);
      return {
        items,
        next_cursor:
          start + limit < listed.length && last
            ? encodeCursor({ createdAt: String(last.device.position), id: last.id })
            : null,
      };
    },
  );

  app.get(
    "/v1/executions/:id/log",
    {
      schema: {
        summary: "The execution's log as text",
        description:
          "Every line the agents reported, device run by device run and attempt by attempt, each prefixed with its time and stream. Streamed. U+0000 and unpaired surrogates the tools printed appear escaped (\\u0000). Past TESTBAY_MAX_EXECUTION_LOG_BYTES an execution's later lines are dropped, after one line saying the log was truncated.",
        tags: ["executions"],
        params: ExecutionParams,
        response: { 200: Type.String(), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const execution = await executions.get(principalOf(request).organizationId, request.params.id);
      // Pulled chunk by chunk as the client reads: a 64 MiB log costs no more event-loop time at once than a
      // small one, and a slow reader holds one chunk's buffer.
      return reply.type("text/plain; charset=utf-8").send(Readable.from(logs.read(execution.id)));
    },
  );

  app.get(
    "/v1/executions/:id/artifacts",
    {
      schema: {
        summary: "List the execution's artifacts",
        tags: ["executions"],
        params: ExecutionParams,
        response: { 200: Type.Object({ items: Type.Array(ArtifactView) }), ...ProblemResponses },
      },
    },
    async (request) => {
      const execution = await executions.get(principalOf(request).organizationId, request.params.id);
      const items = (await results.artifacts(execution.id)).map((a) => ({
        name: a.name,
        device: a.position,
        shard: a.shard,
        attempt: a.attempt,
        size_bytes: a.sizeBytes,
        sha256: a.sha256,
        content_type: a.contentType,
        created_at: a.createdAt,
        url: `/v1/executions/${execution.id}/artifacts/${a.name}?device=${a.position}&shard=${a.shard}&attempt=${a.attempt}`,
      }));
      return { items };
    },
  );

  app.get(
    "/v1/executions/:id/artifacts/*",
    {
      schema: {
        summary: "Download an artifact",
        description:
          "By name; with several device runs or attempts, ?device=, ?shard= and ?attempt= choose (default: the first device run that has it, its latest attempt). Supports a single Range. Always served as an attachment, with X-Content-Type-Options: nosniff. Served with the type the agent sent only when it is one of image/png, image/jpeg, image/gif, image/webp, video/mp4, video/webm, text/plain, application/json, application/xml, text/xml, application/zip, application/pdf; anything else (scripts, HTML, SVG included) as application/octet-stream.",
        tags: ["executions"],
        params: Type.Object({ id: ExecutionId, "*": Type.String() }),
        querystring: ArtifactQuery,
        response: { ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const execution = await executions.get(principalOf(request).organizationId, request.params.id);
      const name = request.params["*"];
      const { device, shard, attempt } = request.query;
      const candidates = (await results.artifacts(execution.id)).filter(
        (a) =>
          a.name === name &&
          (device === undefined || a.position === device) &&
          (shard === undefined || a.shard === shard) &&
          (attempt === undefined || a.attempt === attempt),
      );
      // The first device run that has it (by entry, then shard), its latest attempt.
      const first = candidates[0];
      const artifact = candidates
        .filter((a) => a.position === first?.position && a.shard === first?.shard)
        .at(-1);
      if (!artifact) {
        throw new ApiError("artifact_not_found", {
          detail: `Execution ${execution.id} has no artifact ${JSON.stringify(name.slice(0, 200))}${device === undefined ? "" : ` on device ${device}`}${shard === undefined ? "" : ` shard ${shard}`}${attempt === undefined ? "" : ` in attempt ${attempt}`}.`,
        });
      }
      // Artifacts are whatever a test wrote: sandboxed even if someone opens one in a browser.
      reply.header("content-security-policy", "sandbox");
      return sendStoredFile(request, reply, {
        size: artifact.sizeBytes,
        sha256: artifact.sha256,
        contentType: servedContentType(artifact.contentType),
        fileName: name.slice(name.lastIndexOf("/") + 1),
        what: "artifact",
        open: (range) => store.read(artifact.blobKey, range),
      });
    },
  );
};
