import { Type } from "typebox";
import { PackageName } from "../apps/index.ts";
import { CiMetadataSchema, ExecutionView } from "../executions/index.ts";
import { VersionId } from "../versions/index.ts";

const PlanId = Type.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9_]+$" });

const Env = Type.Record(
  Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]{0,127}$" }),
  Type.String({ maxLength: 4096 }),
  {
    maxProperties: 100,
    description:
      "Environment variables for the run's steps. Visible to everyone in the organization: no secrets.",
  },
);

/**
 * Checked by the route (triggers.routes.ts priorityOf) rather than as an enum here, so that another value is
 * refused with the values that are allowed, not a schema's "must be equal to constant".
 */
const Priority = Type.String({
  maxLength: 32,
  description:
    "high, normal (the default) or low: within the organization a device takes high runs before normal ones, normal before low, each oldest first (API.md §15); between organizations the fair share decides",
});

export const TriggerBody = Type.Object(
  {
    test_plan_id: PlanId,
    package_name: PackageName,
    version: VersionId,
    env: Type.Optional(Env),
    ci: Type.Optional(CiMetadataSchema),
    priority: Type.Optional(Priority),
  },
  { additionalProperties: false },
);

export const BatchTriggerBody = Type.Object(
  {
    package_name: PackageName,
    version: VersionId,
    test_plan_ids: Type.Array(PlanId, { minItems: 1, maxItems: 100, uniqueItems: true }),
    env: Type.Optional(Env),
    ci: Type.Optional(CiMetadataSchema),
    priority: Type.Optional(Priority),
  },
  { additionalProperties: false },
);

export const FailedExecution = Type.Object({
  test_plan_id: Type.String(),
  status: Type.Integer(),
  code: Type.String(),
  reason: Type.Optional(Type.String()),
  detail: Type.String(),
  fix: Type.String(),
});

export const TriggerResponse = Type.Object({ execution: ExecutionView });

export const BatchTriggerResponse = Type.Object({
  executions: Type.Array(ExecutionView),
  failed_executions: Type.Array(FailedExecution, {
    description:
      "Plans that did not start, each with why and what to do. Present (maybe empty) on every response.",
  }),
});
