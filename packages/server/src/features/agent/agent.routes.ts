import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import { ApiError } from "../../errors.ts";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { sendStoredFile } from "../../http/send-stored-file.ts";
import { acceptStreamedBodies, streamUpload } from "../../http/upload/stream-upload.ts";
import type { LeasedRun } from "../device-runs/index.ts";
import { VersionFileName } from "../versions/index.ts";
import {
  AgentList,
  ArtifactResponse,
  artifactNamePattern,
  ClaimBody,
  ClaimResponse,
  CompleteBody,
  CompleteResponse,
  EventsBody,
  EventsResponse,
  HeartbeatResponse,
  LeaseParams,
  ListTestsBody,
  ListTestsResponse,
  NextBatchBody,
  NextBatchResponse,
  SessionReportBody,
  SessionReportResponse,
  StepParams,
} from "./agent.schemas.ts";
import type { AgentService } from "./agent.service.ts";

const agentsOnly = { auth: ["agent"] } as const;

/** A step's listing: 20,000 tests of two 500-character names at most (JSON escapes aside). */
const listBodyLimit = 24 * 1024 * 1024;

/**
 * The organization of the run a lease holds, for the lease's calls: the agent's own, or for an `--all-orgs`
 * agent (API.md §15) that of the run it claimed (an unknown lease: its own, which answers lease_lost).
 */
async function leaseOrganizationOf(
  agents: AgentService,
  request: FastifyRequest,
  leaseId: string,
): Promise<string> {
  const principal = principalOf(request);
  if (!principal.allOrganizations) return principal.organizationId;
  return (await agents.organizationOfLease(leaseId)) ?? principal.organizationId;
}

/** The JSON half of the agent protocol (API.md §7). */
export const agentRoutes: FastifyPluginAsyncTypebox<{ agents: AgentService }> = async (app, { agents }) => {
  app.post(
    "/v1/agent/claim",
    {
      config: agentsOnly,
      schema: {
        summary: "Claim a job (long poll)",
        description:
          "Hands out the oldest queued device run this agent can do: 200 with the job and its lease, or 204 when none came within wait_seconds (≤ 30). A claim is exclusive. Renew the lease with heartbeats; one not renewed within TESTBAY_LEASE_TTL_SECONDS is re-queued up to the plan's max_attempts, then ends errored (reason agent_lost).",
        tags: ["agents"],
        body: ClaimBody,
        response: {
          200: ClaimResponse,
          204: Type.Null({ description: "No job within wait_seconds" }),
          ...ProblemResponses,
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const gone = new AbortController();
      // The response's close before it was sent means the agent hung up: stop waiting for work for it.
      reply.raw.once("close", () => gone.abort());
      const body = request.body;
      const job = await agents.claim(
        {
          organizationId: principal.organizationId,
          ...(principal.allOrganizations ? { allOrganizations: true } : {}),
          agentId: body.agent_id,
          devices: body.devices,
          drainedDevices: body.drained_devices ?? [],
          host: body.host ?? true,
          // Every agent can inspect a binary (its schema says so), also one that lists no step types.
          stepTypes: [...new Set(["inspect", ...(body.step_types ?? [])])],
          ...(body.claim_id === undefined ? {} : { claimId: body.claim_id }),
          ...(body.abandoned_claims === undefined ? {} : { abandonedClaims: body.abandoned_claims }),
          ...(body.appium === undefined ? {} : { appium: body.appium }),
        },
        body.wait_seconds ?? 0,
        gone.signal,
      );
      if (gone.signal.aborted) {
        // Nobody is listening: the run it was given goes back to the queue at once, and answering would leave
        // a response the server waits on when it closes.
        if (job) await agents.release(await leaseOrganizationOf(agents, request, job.lease_id), job.lease_id);
        reply.hijack();
        request.raw.socket?.destroy();
        return reply;
      }
      if (!job) return reply.code(204).send(null);
      return { job };
    },
  );

  app.get(
    "/v1/agents",
    {
      schema: {
        summary: "List the agents that serve the organization",
        description:
          "Every agent that claimed work for this organization, and every fleet agent (serves: all_organizations, an --all-orgs agent client's, of any organization), with its step types, its devices (idle, busy or drained), the executions it runs now and, for an agent started with --appium, its Appium's version and drivers (appium, null for other agents). online: seen within the last 75 s.",
        tags: ["agents"],
        response: { 200: AgentList, ...ProblemResponses },
      },
    },
    async (request) => agents.list(principalOf(request).organizationId),
  );

  app.post(
    "/v1/agent/jobs/:lease_id/heartbeat",
    {
      config: agentsOnly,
      schema: {
        summary: "Renew a lease",
        description:
          "Extends the lease by TESTBAY_LEASE_TTL_SECONDS and says whether someone asked to cancel the run. 409 lease_lost: stop the job.",
        tags: ["agents"],
        params: LeaseParams,
        response: { 200: HeartbeatResponse, ...ProblemResponses },
      },
    },
    async (request) =>
      agents.heartbeat(
        await leaseOrganizationOf(agents, request, request.params.lease_id),
        request.params.lease_id,
        // A fleet agent's row is under its client's organization, whichever organization's run it holds.
        principalOf(request).organizationId,
      ),
  );

  for (const [path, which, what] of [
    ["binary", "binary", "binary"],
    ["test-package", "testPackage", "test package"],
  ] as const) {
    app.get(
      `/v1/agent/jobs/:lease_id/${path}`,
      {
        config: agentsOnly,
        schema: {
          summary: `Download the job's ${what}`,
          description: `The ${what} of the version the leased run tests, while the lease is held (409 lease_lost once it is not): the job's ${path === "binary" ? "binary_url" : "test_package.url"} for an agent client made with --all-orgs (API.md §15), which may hold a run of another organization than its own. ETag is the SHA-256; supports a single Range.`,
          tags: ["agents"],
          params: LeaseParams,
          response: { ...ProblemResponses },
        },
      },
      async (request, reply) => {
        const leaseId = request.params.lease_id;
        const { file, open } = await agents.leasedFile(
          await leaseOrganizationOf(agents, request, leaseId),
          leaseId,
          which,
        );
        return sendStoredFile(request, reply, {
          size: file.sizeBytes,
          sha256: file.sha256,
          contentType: "application/octet-stream",
          fileName: file.fileName,
          what,
          open,
        });
      },
    );
  }

  app.get(
    "/v1/agent/jobs/:lease_id/files/:name",
    {
      config: agentsOnly,
      schema: {
        summary: "Download a file of the job's version",
        description:
          "A file uploaded with the version the leased run tests (the job's version_files[].url, API.md §14), while the lease is held: 409 lease_lost once it is not, 404 version_file_not_found for a name the version does not have. ETag is the SHA-256; supports a single Range.",
        tags: ["agents"],
        params: Type.Object({ lease_id: LeaseParams.properties.lease_id, name: VersionFileName }),
        response: { ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { file, open } = await agents.versionFile(
        await leaseOrganizationOf(agents, request, request.params.lease_id),
        request.params.lease_id,
        request.params.name,
      );
      return sendStoredFile(request, reply, {
        size: file.sizeBytes,
        sha256: file.sha256,
        contentType: "application/octet-stream",
        fileName: file.name,
        what: "version file",
        open,
      });
    },
  );

  app.post(
    "/v1/agent/jobs/:lease_id/events",
    {
      // What devices and tools printed: stored with what no database can hold escaped, never refused.
      config: { ...agentsOnly, deviceText: true },
      schema: {
        summary: "Report step results, test cases and log lines",
        description:
          "Up to 1000 events per call, each numbered by the agent (seq, unique within the lease) so a retried batch is stored once.",
        tags: ["agents"],
        params: LeaseParams,
        body: EventsBody,
        response: { 200: EventsResponse, ...ProblemResponses },
      },
    },
    async (request) =>
      agents.record(
        await leaseOrganizationOf(agents, request, request.params.lease_id),
        request.params.lease_id,
        request.body.events,
      ),
  );

  app.post(
    "/v1/agent/jobs/:lease_id/steps/:step_index/tests",
    {
      // Test names are what devices and tools printed: stored as test_case events store them.
      config: { ...agentsOnly, deviceText: true },
      // Up to 20,000 tests of two 500-character names each.
      bodyLimit: listBodyLimit,
      schema: {
        summary: "List a sharded step's tests",
        description:
          "A shard's agent reports every test the step (an instrumentation or maestro step, by its index in plan.steps) would run on its device, before running any. The first listing of the step among its device entry's shards makes the step's plan (planned: true): sharding uniform gives each shard a fixed list of equal count; duration (the default) cuts the tests, longest first by each test's p80 duration over the plan's last 20 finished executions (15 s for a test never seen), into batches of a queue the shards share. A later listing is answered from the plan, which stands (differs: true when it named other tests). Then take batches with POST …/next-batch. Only for jobs with device_run.shard_count > 1: a step with shards k runs on shards 0..k-1 only (400 step_not_on_shard on the others), and inspect and shell steps run on shard 0 only.",
        tags: ["agents"],
        params: StepParams,
        body: ListTestsBody,
        response: { 200: ListTestsResponse, ...ProblemResponses },
      },
    },
    async (request) =>
      agents.listTests(
        await leaseOrganizationOf(agents, request, request.params.lease_id),
        request.params.lease_id,
        request.params.step_index,
        request.body.tests,
        (message, details) => request.log.warn(details, message),
      ),
  );

  app.post(
    "/v1/agent/jobs/:lease_id/steps/:step_index/next-batch",
    {
      config: agentsOnly,
      schema: {
        summary: "Take a sharded step's next batch of tests",
        description:
          "Marks finished_batch_id done (when this lease holds it) and hands out the next batch of the step: with duration sharding the next of the queue the shards share, with uniform this shard's own list. Run exactly its tests (instrumentation: -e testFile), report them as test_case events, and ask again with its id until batch is null. An agent that stops taking batches while its attempt goes on (its step ran out of time) sends its last finished_batch_id with take: false: the batch is marked done and none is taken, so the queue stays to the other shards. A batch this lease holds unfinished is handed out again. When an attempt ends (complete, a lapsed lease, a hand-back), the batches it holds go back to the queue for the other shards; a re-queued attempt's finished batches too, since its results are replaced by the next attempt's. 409 shard_plan_missing: the step was never listed.",
        tags: ["agents"],
        params: StepParams,
        body: NextBatchBody,
        response: { 200: NextBatchResponse, ...ProblemResponses },
      },
    },
    async (request) =>
      agents.nextBatch(
        await leaseOrganizationOf(agents, request, request.params.lease_id),
        request.params.lease_id,
        request.params.step_index,
        request.body.finished_batch_id ?? null,
        request.body.take ?? true,
      ),
  );

  app.post(
    "/v1/agent/jobs/:lease_id/complete",
    {
      config: agentsOnly,
      schema: {
        summary: "End the job",
        description:
          "Ends this attempt. The summary is counted from the test cases sent as events; a passed report with failed tests ends failed. A failed or errored attempt is re-queued while the plan allows more attempts.",
        tags: ["agents"],
        params: LeaseParams,
        body: CompleteBody,
        response: { 200: CompleteResponse, ...ProblemResponses },
      },
    },
    async (request) =>
      agents.complete(
        await leaseOrganizationOf(agents, request, request.params.lease_id),
        request.params.lease_id,
        request.body.status,
        request.body.reason ?? null,
        request.body.setup_ms,
      ),
  );
};

/** Artifact uploads: their bodies are files of any type, streamed, so they get their own content parsing. */
export const agentArtifactRoutes: FastifyPluginAsyncTypebox<{ agents: AgentService }> = async (
  app,
  { agents },
) => {
  acceptStreamedBodies(app);

  app.put(
    "/v1/agent/jobs/:lease_id/artifacts/*",
    {
      config: agentsOnly,
      schema: {
        summary: "Upload an artifact",
        description:
          "The body is the file, streamed (size limit TESTBAY_MAX_UPLOAD_BYTES). The name is a relative path of up to 16 segments of letters, digits, '.', '_' and '-' (no segment starts with '.'), at most 1024 characters: files pulled from the device go under pulled/<shard>/<device path without its leading slash>, coverage files under coverage/<shard>/<file name> (API.md §14). The same name again in the same attempt replaces the file.",
        tags: ["agents"],
        params: Type.Object({ lease_id: LeaseParams.properties.lease_id, "*": Type.String() }),
        response: { 200: ArtifactResponse, 201: ArtifactResponse, ...ProblemResponses },
      },
    },
    async (request, reply) =>
      streamUpload(request, reply, {
        what: "artifact upload",
        beforeBody: () => artifactName(request.params["*"]),
        receive: async (name, body) => {
          const stored = await agents.putArtifact(
            await leaseOrganizationOf(agents, request, request.params.lease_id),
            request.params.lease_id,
            name,
            body,
            contentTypeOf(request.headers["content-type"]),
          );
          return reply.code(stored.created ? 201 : 200).send(stored);
        },
      }),
  );
};

/** The artifact's name from the path, refused (before its body is read) unless artifactNamePattern allows it. */
function artifactName(name: string): string {
  if (artifactNamePattern.test(name)) return name;
  throw new ApiError("invalid_request", {
    detail: `${JSON.stringify(name.slice(0, 200))} is not a valid artifact name.`,
    fix: "Name artifacts with relative paths of letters, digits, '.', '_' and '-' (e.g. screenshots/login.png); no '..', no leading '.' or '/'.",
    extra: { errors: [{ path: "/name", in: "params", message: "is not a valid artifact name" }] },
  });
}

/** A plain `type/subtype` is kept (parameters too, if tame); anything else is stored as octet-stream. */
function contentTypeOf(header: string | undefined): string {
  if (header && /^[a-z0-9.+-]+\/[a-z0-9.+-]+(?:; ?[a-z0-9-]+=[a-z0-9.-]+)?$/i.test(header)) return header;
  return "application/octet-stream";
}

/** What an agent reports of the Appium session of its job (POST /v1/agent/jobs/{lease_id}/session). */
export type SessionReport =
  | { status: "ready"; capabilities: Record<string, unknown> }
  | { status: "failed"; error: string; message: string };

/**
 * Where those reports go: the sessions feature (features/sessions/session-reports.ts), which keeps sessions. A
 * port, so that the agent protocol does not depend on how sessions are kept. Resolves to the session's state
 * after the report.
 */
export interface SessionReports {
  report(run: LeasedRun, report: SessionReport): Promise<"queued" | "ready" | "failed" | "ended">;
}

/**
 * The Appium half of the agent protocol (API.md §12, docs/appium-relay.md step 2): the agent says whether the
 * Appium session of its job was created. Registered by the sessions feature, which keeps sessions.
 */
export const agentSessionRoutes: FastifyPluginAsyncTypebox<{
  agents: AgentService;
  sessions: SessionReports;
}> = async (app, { agents, sessions }) => {
  app.post(
    "/v1/agent/jobs/:lease_id/session",
    {
      // Appium's messages are what a tool printed: kept, with what no database can hold escaped.
      config: { ...agentsOnly, deviceText: true },
      schema: {
        summary: "Report an Appium session ready or failed",
        description:
          "For a job whose plan.steps[0] is an appium step: {status: ready, capabilities} once Appium created the session (the client waiting in POST /wd/hub/session gets them), or {status: failed, error, message} when it could not (the client gets that W3C error's message). 409 lease_lost as for the other job calls; the answer's state says what the session is now.",
        tags: ["agents"],
        params: LeaseParams,
        body: SessionReportBody,
        response: { 200: SessionReportResponse, ...ProblemResponses },
      },
    },
    async (request) => {
      const organizationId = await leaseOrganizationOf(agents, request, request.params.lease_id);
      const run = await agents.leased(organizationId, request.params.lease_id);
      return { state: await sessions.report(run, request.body as SessionReport) };
    },
  );
};
