import { Readable } from "node:stream";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { ApiError } from "../../errors.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { sendStoredFile } from "../../http/send-stored-file.ts";
import type { BlobStore } from "../../storage/index.ts";
import { principalOf } from "../auth/index.ts";
import { ExecutionId, ExecutionParams } from "./executions.schemas.ts";
import type { ExecutionsService } from "./executions.service.ts";
import { junitReport } from "./junit-report.ts";
import type { LogStore } from "./log-store.ts";
import type { ResultsRepo } from "./results.repo.ts";

export const ArtifactView = Type.Object({
  name: Type.String(),
  device: Type.Integer({
    description: "Position of the device run in the plan's devices (0 for a host run)",
  }),
  attempt: Type.Integer(),
  size_bytes: Type.Integer(),
  sha256: Type.String(),
  content_type: Type.String(),
  created_at: Type.String({ format: "date-time" }),
  url: Type.String(),
});

const ArtifactQuery = Type.Object(
  {
    device: Type.Optional(Type.Integer({ minimum: 0, maximum: 19 })),
    attempt: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
  },
  { additionalProperties: false },
);

/** What agents reported, for people and CI: the merged JUnit report, the log and the artifacts. */
export const resultsRoutes: FastifyPluginAsyncTypebox<{
  executions: ExecutionsService;
  results: ResultsRepo;
  logs: LogStore;
  store: BlobStore;
}> = async (app, { executions, results, logs, store }) => {
  app.get(
    "/v1/executions/:id/junit",
    {
      schema: {
        summary: "The execution's test results as one JUnit XML file",
        description:
          "A testsuite per device run with its latest attempt's test cases; failures of earlier attempts appear as flakyFailure (passed in the end) or rerunFailure.",
        tags: ["executions"],
        params: ExecutionParams,
        produces: ["application/xml"],
        response: { 200: Type.String(), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const execution = await executions.get(principalOf(request).organizationId, request.params.id);
      const report = junitReport(execution, await results.testCases(execution.id));
      return reply.type("application/xml; charset=utf-8").send(report);
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
        attempt: a.attempt,
        size_bytes: a.sizeBytes,
        sha256: a.sha256,
        content_type: a.contentType,
        created_at: a.createdAt,
        url: `/v1/executions/${execution.id}/artifacts/${a.name}?device=${a.position}&attempt=${a.attempt}`,
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
          "By name; with several device runs or attempts, ?device= and ?attempt= choose (default: the first device run that has it, its latest attempt). Supports a single Range. Always served as an attachment.",
        tags: ["executions"],
        params: Type.Object({ id: ExecutionId, "*": Type.String() }),
        querystring: ArtifactQuery,
        response: { ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const execution = await executions.get(principalOf(request).organizationId, request.params.id);
      const name = request.params["*"];
      const { device, attempt } = request.query;
      const candidates = (await results.artifacts(execution.id)).filter(
        (a) =>
          a.name === name &&
          (device === undefined || a.position === device) &&
          (attempt === undefined || a.attempt === attempt),
      );
      const position = candidates[0]?.position;
      const artifact = candidates.filter((a) => a.position === position).at(-1);
      if (!artifact) {
        throw new ApiError("artifact_not_found", {
          detail: `Execution ${execution.id} has no artifact ${JSON.stringify(name.slice(0, 200))}${device === undefined ? "" : ` on device ${device}`}${attempt === undefined ? "" : ` in attempt ${attempt}`}.`,
        });
      }
      // Artifacts are whatever a test wrote: sandboxed even if someone opens one in a browser.
      reply.header("content-security-policy", "sandbox");
      return sendStoredFile(request, reply, {
        size: artifact.sizeBytes,
        sha256: artifact.sha256,
        contentType: artifact.contentType,
        fileName: name.slice(name.lastIndexOf("/") + 1),
        what: "artifact",
        open: (range) => store.read(artifact.blobKey, range),
      });
    },
  );
};
