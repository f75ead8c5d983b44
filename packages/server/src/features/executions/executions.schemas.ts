import { Type } from "typebox";
import { PageQuery } from "../../http/pagination.ts";
import { PackageName } from "../apps/index.ts";
import { VersionId } from "../versions/index.ts";

export const ExecutionStatus = Type.Union(
  ["queued", "running", "passed", "failed", "errored", "cancelled"].map((s) => Type.Literal(s)),
);

export const Summary = Type.Object({
  tests: Type.Integer(),
  passed: Type.Integer(),
  failed: Type.Integer(),
  skipped: Type.Integer(),
  flaky: Type.Integer({ description: "Tests that failed on one attempt and passed on another" }),
  quarantined_failures: Type.Optional(
    Type.Integer({
      description:
        "Failed tests (counted in failed too) that were quarantined when their run ended, so they did not fail it (PUT /v1/tests/{test_id}/quarantine). Always sent by this server; optional for clients of servers older than quarantine.",
    }),
  ),
});

const StepStatus = Type.String({
  description: "pending, running, passed, failed, errored, cancelled or skipped",
});
const Time = Type.Union([Type.String({ format: "date-time" }), Type.Null()]);

export const DeviceRunView = Type.Object({
  device: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
    description: "The plan's device entry; null for a plan that runs on the agent host",
  }),
  shard: Type.Integer({
    minimum: 0,
    description:
      "Which of the entry's shards this device run is (the plan's shards: one device run per shard of each entry); 0 when not sharded",
  }),
  shards_planned: Type.Optional(
    Type.Union(
      [
        Type.Object({
          count: Type.Integer({ minimum: 1, description: "The device runs its entry was given" }),
          reason: Type.String({
            description: 'Why, e.g. "19 min of tests ÷ 5 min = 4 shards; 3 matching devices online → 3"',
          }),
        }),
        Type.Null(),
      ],
      {
        description:
          'How shards: "auto" chose its entry\'s device runs at trigger (API.md §13); null when no step asked for it. Always sent by this server; optional for clients of older servers.',
      },
    ),
  ),
  setup_ms: Type.Optional(
    Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description:
        "How long the agent took to make the device clean before this run's latest attempt (a managed emulator's snapshot load or restart, a simulator's erase), as it reported; null when it reported none. Always sent by this server; optional for clients of older servers.",
    }),
  ),
  status: ExecutionStatus,
  attempt: Type.Integer({ description: "The current (or last) attempt, from 1 to the plan's max_attempts" }),
  reason: Type.Union([Type.String(), Type.Null()], {
    description: "Why the last attempt ended as it did: agent_lost, timeout, cancelled, …",
  }),
  summary: Type.Union([Summary, Type.Null()], { description: "The last finished attempt's test counts" }),
  agent_id: Type.Union([Type.String(), Type.Null()]),
  claimed_device: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
    description:
      "The agent's device it ran on, as the agent described it when it claimed the run (serial, platform, model, os_version, and API.md §13's api_level, abi, emulator, managed, pool, labels, state, error when the agent sends them); null on the agent host",
  }),
  started_at: Time,
  finished_at: Time,
  steps: Type.Array(
    Type.Object({
      index: Type.Integer(),
      type: Type.String(),
      name: Type.String(),
      status: StepStatus,
      message: Type.Union([Type.String(), Type.Null()]),
      started_at: Time,
      finished_at: Time,
    }),
    { description: "The plan's steps with this device run's latest attempt's results" },
  ),
});

/**
 * Where a trigger came from in the caller's CI. Every field is optional; an empty string counts as absent
 * (CI variables such as GITHUB_HEAD_REF are set but empty on some events, and a trigger should not fail on that).
 */
export const CiMetadata = Type.Object(
  {
    provider: Type.Optional(
      Type.String({ maxLength: 64, description: "The CI system: github, gitlab or any other name" }),
    ),
    branch: Type.Optional(Type.String({ maxLength: 255, description: "The branch (or tag) built" })),
    commit: Type.Optional(Type.String({ maxLength: 64, description: "The commit built (its full hash)" })),
    pull_request: Type.Optional(
      Type.String({ maxLength: 64, description: "The pull (merge) request's number, as a string" }),
    ),
    build_url: Type.Optional(
      Type.String({
        maxLength: 2048,
        pattern: "^(https?://.+)?$",
        description: "A link to the CI job (http or https)",
      }),
    ),
  },
  { additionalProperties: false },
);

export const CiView = Type.Union([CiMetadata, Type.Null()], {
  description: "The trigger's ci metadata, only the fields it gave; null when it gave none",
});

export const ExecutionKind = Type.Union([Type.Literal("run"), Type.Literal("session")], {
  description:
    "run: a test plan triggered; session: a WebDriver session (API.md §12: POST /wd/hub/session), whose id is its session ID",
});

export const ExecutionView = Type.Object({
  id: Type.String(),
  kind: ExecutionKind,
  name: Type.Union([Type.String(), Type.Null()], {
    description:
      'The plan\'s name when it was triggered; for a session, testbay:options.name ("Appium session" when it gave none)',
  }),
  test_plan_id: Type.Union([Type.String(), Type.Null()], {
    description: "The plan triggered; null for a session (kind session)",
  }),
  package_name: Type.Union([Type.String(), Type.Null()], {
    description: "The app's package name; null for a session that names no registered app",
  }),
  version: Type.Union([Type.String(), Type.Null()], {
    description: "The version ID; null when package_name is",
  }),
  status: ExecutionStatus,
  cancel_requested: Type.Boolean(),
  created_at: Type.String({ format: "date-time" }),
  started_at: Time,
  finished_at: Time,
  summary: Summary,
  ci: CiView,
  priority: Type.Union([Type.Literal("high"), Type.Literal("normal"), Type.Literal("low")], {
    description:
      "As the trigger asked (default normal): within its organization a device takes high runs before normal ones, normal before low (API.md §15)",
  }),
  triggered_by: Type.Object(
    {
      type: Type.Union([Type.Literal("client"), Type.Literal("person")]),
      id: Type.String({ description: "The client's ID, or the person's email" }),
      name: Type.Union([Type.String(), Type.Null()], {
        description: "The client's name (GET /v1/clients); null for a client without one, and for a person",
      }),
    },
    { description: "Who triggered it: a client (a CI pipeline) or a person signed in to the dashboard." },
  ),
  client_result: Type.Union(
    [
      Type.Object({
        status: Type.Union([Type.Literal("passed"), Type.Literal("failed")]),
        reason: Type.Union([Type.String(), Type.Null()]),
      }),
      Type.Null(),
    ],
    {
      description:
        "A session's verdict as its client set it (POST /v1/executions/{id}/result, or setSessionStatus through /execute/sync), which its status follows once it ends; null when the client set none, and for runs",
    },
  ),
  waiting_reason: Type.Union(
    [
      Type.Object({
        code: Type.Union([Type.Literal("no_capable_agent"), Type.Literal("org_limit")]),
        detail: Type.String({ description: "Why no online agent can take it, and what to do" }),
      }),
      Type.Null(),
    ],
    {
      description:
        "Why a queued execution waits: no_capable_agent when no online agent can take its device runs, org_limit when its organization runs as many device runs as its limit allows (testbay-server org set-limits, API.md §15); else null",
    },
  ),
  devices: Type.Array(DeviceRunView),
  steps: Type.Array(
    Type.Object({ index: Type.Integer(), type: Type.String(), name: Type.String(), status: StepStatus }),
    { description: "The plan's steps, each with the status that most needs attention across device runs" },
  ),
});

export const ExecutionId = Type.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9_]+$" });
export const ExecutionParams = Type.Object({ id: ExecutionId });

export const ExecutionListQuery = Type.Object(
  {
    ...PageQuery,
    test_plan_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    package_name: Type.Optional(PackageName),
    version: Type.Optional(VersionId),
    status: Type.Optional(ExecutionStatus),
    branch: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: "ci.branch equals this" }),
    ),
    commit: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "ci.commit equals this" })),
  },
  { additionalProperties: false },
);

export const ExecutionList = Type.Object({
  items: Type.Array(ExecutionView),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});
