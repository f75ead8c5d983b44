import { type TSchema, Type } from "typebox";
import { TestPlanId } from "../testplans/testplans.schemas.ts";

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const Signature = Type.String({
  pattern: "^[0-9a-f]{24}$",
  description: "The group's signature: 24 hex digits hashed from the exception type, message and app frame",
});

const FailureStatus = Type.Union([Type.Literal("new"), Type.Literal("ongoing"), Type.Literal("fixed")], {
  description:
    "new: first seen in the last 24 hours; fixed (wins over new): its tests passed in each of the plan's last 3 executions since it was last seen; ongoing otherwise",
});

const Seen = Type.Object({
  execution_id: Type.String(),
  version: Nullable(Type.String({ description: "The app version the execution ran" })),
  commit: Nullable(
    Type.String({ description: "The CI commit the execution was triggered for, when it said" }),
  ),
  at: Type.String({ format: "date-time", description: "When that execution was triggered" }),
});

const FailureGroupView = Type.Object({
  signature: Signature,
  title: Type.String({ description: "The exception type and message with placeholders for what varies" }),
  status: FailureStatus,
  occurrences: Type.Integer({
    description: "Failed test cases with this signature (tries and retries each count)",
  }),
  tests: Type.Integer({ description: "Distinct tests that failed with it" }),
  executions: Type.Integer({ description: "Executions it happened in" }),
  first_seen: Seen,
  last_seen: Seen,
  example: Type.Object({
    execution_id: Type.String(),
    test_id: Nullable(Type.String({ description: "The test's id within its plan (GET /v1/tests)" })),
    message: Nullable(Type.String()),
    stack_head: Nullable(Type.String({ description: "The first lines of its stack trace or details" })),
  }),
});

export const FailureGroupPage = Type.Object({
  items: Type.Array(FailureGroupView),
  next_cursor: Nullable(Type.String()),
});

const Filters = {
  package_name: Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, description: "Only this app's executions" }),
  ),
  test_plan_id: Type.Optional(TestPlanId),
};

export const FailureListQuery = Type.Object(
  {
    ...Filters,
    since: Type.Optional(
      Type.String({
        format: "date-time",
        description: "Only groups seen at or after this time (their last occurrence)",
      }),
    ),
    status: Type.Optional(FailureStatus),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: "next_cursor of the previous page" })),
  },
  { additionalProperties: false },
);

export const OccurrencesQuery = Type.Object(
  {
    ...Filters,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 300, description: "next_cursor of the previous page" })),
  },
  { additionalProperties: false },
);

export const SignatureParams = Type.Object({ signature: Signature });

const OccurrenceView = Type.Object({
  execution_id: Type.String(),
  test_plan_id: Nullable(Type.String()),
  device_run_id: Type.String(),
  attempt: Type.Integer(),
  test_id: Nullable(Type.String()),
  classname: Type.String(),
  name: Type.String(),
  status: Type.Union([Type.Literal("failed"), Type.Literal("errored")]),
  message: Nullable(Type.String()),
  stack_head: Nullable(Type.String()),
  device: Nullable(
    Type.String({
      description:
        'The device the run was on, as the agent named it: model, platform and OS version, serial ("Pixel 7, android 14 (emulator-5554)")',
    }),
  ),
  version: Nullable(Type.String()),
  commit: Nullable(Type.String()),
  at: Type.String({ format: "date-time", description: "When the execution was triggered" }),
});

export const OccurrencePage = Type.Object({
  signature: Signature,
  title: Type.String(),
  items: Type.Array(OccurrenceView),
  next_cursor: Nullable(Type.String()),
});
