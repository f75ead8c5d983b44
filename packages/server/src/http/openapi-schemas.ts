import { type TSchema, Type } from "typebox";
import {
  AgentAppium,
  AgentDevice,
  ArtifactResponse,
  ClaimBody,
  ClaimResponse,
  CompleteBody,
  CompleteResponse,
  EventsBody,
  EventsResponse,
  HeartbeatResponse,
  Job,
} from "../features/agent/agent.schemas.ts";
import { AppList, AppView, CreateAppBody, Platform } from "../features/apps/apps.schemas.ts";
import { OAuthProblem, TokenRequest, TokenResponse } from "../features/auth/auth.schemas.ts";
import { AuthorizationServerMetadata } from "../features/auth/authorization-server-metadata.ts";
import { ClientView, WhoAmI } from "../features/clients/clients.schemas.ts";
import {
  DeviceRunView,
  ExecutionList,
  ExecutionStatus,
  ExecutionView,
  Summary,
} from "../features/executions/executions.schemas.ts";
import { ArtifactView } from "../features/executions/results.routes.ts";
import {
  CreateTestPlanBody,
  DeviceSpec,
  InspectStep,
  InstrumentationStep,
  MaestroStep,
  PatchTestPlanBody,
  ShellStep,
  Step,
  TestPlanList,
  TestPlanState,
  TestPlanView,
  XcuitestStep,
} from "../features/testplans/testplans.schemas.ts";
import {
  BatchTriggerBody,
  BatchTriggerResponse,
  FailedExecution,
  TriggerBody,
  TriggerResponse,
} from "../features/triggers/triggers.schemas.ts";
import { BinaryMetadataSchema, VersionList, VersionView } from "../features/versions/versions.schemas.ts";
import { ProblemType } from "./problems.routes.ts";

/**
 * What a claimed job's `plan` holds: the plan as it was when the run was triggered. The route's own schema
 * passes it through unchecked (it was checked when the plan was saved); the document says what is in it.
 */
const JobPlan = Type.Object({
  name: Type.String(),
  devices: Type.Array(DeviceSpec),
  steps: Type.Array(Step),
  timeout_seconds: Type.Integer(),
  max_attempts: Type.Integer(),
});

const runEvent = EventsBody.properties.events.items as unknown as TSchema & { oneOf: TSchema[] };
const [LogEvent, StepStartedEvent, StepFinishedEvent, TestCaseEvent] = runEvent.oneOf;

/**
 * Schemas the routes leave open (free-form objects, for speed or because they were checked on the way in)
 * and the document describes exactly, and copies of named schemas that the document shows as the named one:
 * documentation only, the routes validate and serialize as before.
 */
export const documentedAs = new Map<object, TSchema>([
  [TestPlanView.properties.steps.items, Step],
  // Type.Optional copies the object it marks optional, so the claim's appium is not AgentAppium by identity.
  [ClaimBody.properties.appium, AgentAppium],
  [Job.properties.plan, JobPlan],
  // binary is null for an Appium session without a registered app (API.md §12): the object is its first choice.
  [Job.properties.binary.anyOf[0].properties.metadata, BinaryMetadataSchema],
  [DeviceRunView.properties.device.anyOf[0] as object, DeviceSpec],
]);

/**
 * The schemas published by name in `components.schemas`, so that generated clients get named types
 * (`components["schemas"]["Execution"]`). Found by identity in the route schemas: a route that uses one of
 * these objects gets a `$ref` to it. Names are part of the client's API: rename only with the SDK.
 */
export const namedSchemas: ReadonlyArray<readonly [string, object | undefined]> = [
  ["ProblemType", ProblemType],
  ["TokenRequest", TokenRequest],
  ["TokenResponse", TokenResponse],
  ["OAuthProblem", OAuthProblem],
  ["AuthorizationServerMetadata", AuthorizationServerMetadata],
  ["WhoAmI", WhoAmI],
  ["Client", ClientView],
  ["Platform", Platform],
  ["App", AppView],
  ["AppList", AppList],
  ["CreateApp", CreateAppBody],
  ["BinaryMetadata", BinaryMetadataSchema],
  ["AppVersion", VersionView],
  ["AppVersionList", VersionList],
  ["DeviceSpec", DeviceSpec],
  ["InspectStep", InspectStep],
  ["ShellStep", ShellStep],
  ["InstrumentationStep", InstrumentationStep],
  ["XcuitestStep", XcuitestStep],
  ["MaestroStep", MaestroStep],
  ["Step", Step],
  ["TestPlanState", TestPlanState],
  ["TestPlan", TestPlanView],
  ["TestPlanList", TestPlanList],
  ["CreateTestPlan", CreateTestPlanBody],
  ["PatchTestPlan", PatchTestPlanBody],
  ["ExecutionStatus", ExecutionStatus],
  ["Summary", Summary],
  ["DeviceRun", DeviceRunView],
  ["Execution", ExecutionView],
  ["ExecutionList", ExecutionList],
  ["Artifact", ArtifactView],
  ["TriggerRequest", TriggerBody],
  ["TriggerResponse", TriggerResponse],
  ["BatchTriggerRequest", BatchTriggerBody],
  ["BatchTriggerResponse", BatchTriggerResponse],
  ["FailedExecution", FailedExecution],
  ["AgentDevice", AgentDevice],
  ["AgentAppium", AgentAppium],
  ["ClaimRequest", ClaimBody],
  ["ClaimResponse", ClaimResponse],
  ["JobPlan", JobPlan],
  ["AgentJob", Job],
  ["HeartbeatResponse", HeartbeatResponse],
  ["LogEvent", LogEvent],
  ["StepStartedEvent", StepStartedEvent],
  ["StepFinishedEvent", StepFinishedEvent],
  ["TestCaseEvent", TestCaseEvent],
  ["RunEvent", runEvent],
  ["EventsRequest", EventsBody],
  ["EventsResponse", EventsResponse],
  ["CompleteRequest", CompleteBody],
  ["CompleteResponse", CompleteResponse],
  ["ArtifactUploaded", ArtifactResponse],
];

/** Marks a named schema where @fastify/swagger inlines it; removed from the finished document. */
export const schemaNameKey = "x-testbay-schema";

const nameOf = new Map<object, string>();
for (const [name, schema] of namedSchemas) {
  if (!schema) throw new Error(`openapi: schema ${name} is missing`);
  if (!nameOf.has(schema)) nameOf.set(schema, name);
}

/**
 * A copy of a route schema for the document: open parts replaced by what they hold, and every named
 * schema given its name as `$id`, which @fastify/swagger turns into a component and a `$ref` (see the
 * refResolver in openapi.ts). The route's own schema is not touched.
 */
export function withSchemaNames(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withSchemaNames);
  if (schema === null || typeof schema !== "object") return schema;
  const replaced = documentedAs.get(schema) ?? schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(replaced)) copy[key] = withSchemaNames(value);
  const name = nameOf.get(replaced);
  if (name) {
    copy.$id = name;
    // @fastify/swagger drops `$id` but keeps extensions: how openapi-document.ts finds a whole body's name.
    copy[schemaNameKey] = name;
  }
  return copy;
}
