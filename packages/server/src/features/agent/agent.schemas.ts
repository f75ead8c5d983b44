import { type Static, Type } from "typebox";
import type { RunEvent } from "../executions/index.ts";
import { InstrumentationTest, XctestTest } from "../versions/index.ts";

const Text = (maxLength: number) => Type.String({ maxLength });
const Timestamp = Type.String({ format: "date-time" });
const Seq = Type.Integer({
  minimum: 0,
  maximum: 2 ** 31 - 1,
  description: "The agent's own count within a lease: an event sent twice is stored once.",
});
const StepIndex = Type.Integer({ minimum: 0, maximum: 49 });
const StepTypeName = Type.Union(
  // appium: WebDriver sessions (API.md §12), offered by agents started with --appium.
  ["inspect", "shell", "instrumentation", "xcuitest", "maestro", "appium"].map((t) => Type.Literal(t)),
);

const deviceStates = ["booting", "idle", "busy", "resetting", "drained", "failed"];

/**
 * A device as an agent describes it. The members after os_version are API.md §13's, all optional so that agents
 * older than them are understood (a device without `state` is idle); null where the agent does not know.
 * Label keys hold no "=" (a label is KEY=VALUE, device-runs/device-selectors.ts).
 */
export const AgentDevice = Type.Object(
  {
    serial: Type.String({ minLength: 1, maxLength: 200 }),
    platform: Type.Union([Type.Literal("android"), Type.Literal("ios")]),
    model: Type.String({ maxLength: 100 }),
    os_version: Type.String({ maxLength: 50 }),
    api_level: Type.Optional(
      Type.Union([
        Type.Integer({ minimum: 1, maximum: 1000, description: "Android's ro.build.version.sdk" }),
        Type.Null(),
      ]),
    ),
    abi: Type.Optional(
      Type.Union([
        Type.String({ maxLength: 50, description: "ro.product.cpu.abi: arm64-v8a, x86_64" }),
        Type.Null(),
      ]),
    ),
    emulator: Type.Optional(Type.Boolean({ description: "true for emulators and simulators" })),
    managed: Type.Optional(
      Type.Boolean({ description: "Started and looked after by the agent (--emulator, --simulator)" }),
    ),
    pool: Type.Optional(
      Type.Union([
        Type.String({
          maxLength: 200,
          description: "The AVD or device type a managed device is an instance of",
        }),
        Type.Null(),
      ]),
    ),
    labels: Type.Optional(
      Type.Record(Type.String({ pattern: "^[^=]{1,64}$" }), Type.String({ maxLength: 200 }), {
        maxProperties: 32,
        description: "The agent's --label KEY=VALUE, which a plan's devices[].labels selects on",
      }),
    ),
    state: Type.Optional(
      Type.Union(
        deviceStates.map((s) => Type.Literal(s)),
        {
          description:
            "booting until it can take a run; idle: it can (only idle devices, or devices without a state, get runs); busy; resetting after a run; drained after three failed runs in a row; failed when its restarts are spent",
        },
      ),
    ),
    error: Type.Optional(
      Type.Union([
        Type.String({ maxLength: 4000, description: "Why, when failed or drained: the tool's last lines" }),
        Type.Null(),
      ]),
    ),
    boot_ms: Type.Optional(
      Type.Union([
        Type.Integer({
          minimum: 0,
          maximum: 86_400_000,
          description: "A managed device: how long its last boot took, from launch to ready (ms)",
        }),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: false },
);

/**
 * What an agent started with `--appium` offers (API.md §12), as Appium itself told it at the agent's start
 * (packages/agent/src/appium/appium-inventory.ts): its version and the drivers installed in its APPIUM_HOME.
 * One schema for the claim that sends it and GET /agents that shows it, named AgentAppium in the OpenAPI
 * document (http/openapi-schemas.ts). The bounds are generous on purpose: an agent whose claim is refused for
 * them could take no work at all.
 */
export const AgentAppium = Type.Object(
  {
    version: Type.String({ maxLength: 100, description: "What `appium --version` printed" }),
    drivers: Type.Array(
      Type.Object(
        {
          name: Type.String({
            maxLength: 200,
            description: "The driver's name in APPIUM_HOME: uiautomator2, xcuitest",
          }),
          automation_name: Type.String({
            maxLength: 200,
            description: "What a session's appium:automationName names to pick it: UiAutomator2, XCUITest",
          }),
          platform_names: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 }),
        },
        { additionalProperties: false },
      ),
      { maxItems: 200, description: "The installed drivers, by name" },
    ),
  },
  {
    additionalProperties: false,
    description:
      "The Appium of an agent started with --appium: its version and installed drivers, as Appium told the agent at its start. Sent with each claim (a claim without it says the agent offers no Appium) and shown by GET /agents.",
  },
);

export const ClaimBody = Type.Object(
  {
    agent_id: Type.String({ minLength: 1, maxLength: 100, pattern: "^[A-Za-z0-9._@-]+$" }),
    devices: Type.Array(AgentDevice, {
      maxItems: 64,
      description: "The devices free right now; a run for a device is matched to one of them.",
    }),
    drained_devices: Type.Optional(
      Type.Array(AgentDevice, {
        maxItems: 64,
        description:
          "Devices the agent stopped offering after three infrastructure failures in a row (GET /agents shows them drained).",
      }),
    ),
    host: Type.Optional(
      Type.Boolean({
        default: true,
        description: "Whether the agent can take a run that needs no device (a plan with devices: []).",
      }),
    ),
    step_types: Type.Optional(
      Type.Array(StepTypeName, {
        uniqueItems: true,
        default: ["inspect"],
        description:
          "The step types this agent can run: inspect always; shell only when started with shell steps allowed; instrumentation with adb and an Android device; xcuitest on macOS with Xcode and an iOS simulator or device; maestro with the maestro CLI; appium when started with --appium (WebDriver sessions, API.md §12).",
      }),
    ),
    appium: Type.Optional(AgentAppium),
    wait_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 30, default: 0 })),
    claim_id: Type.Optional(
      Type.String({
        minLength: 8,
        maxLength: 64,
        pattern: "^[A-Za-z0-9_-]+$",
        description:
          "The agent's own id of this claim (a random UUID): if it gives up on the claim while it waits, it names it in abandoned_claims later.",
      }),
    ),
    abandoned_claims: Type.Optional(
      Type.Array(Type.String({ minLength: 8, maxLength: 64, pattern: "^[A-Za-z0-9_-]+$" }), {
        maxItems: 50,
        uniqueItems: true,
        description:
          "claim_ids of this agent's earlier claims it stopped waiting for (its free devices changed). A run the server granted one of them just as the agent hung up never reached the agent: it goes back to the queue at once instead of waiting for its lease to lapse. Naming a claim that got nothing, or again, does nothing.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type ClaimBody = Static<typeof ClaimBody>;

const jobTestPackageFields = {
  url: Type.String({ description: "Where to download the test package; absolute like binary_url" }),
  sha256: Type.String(),
  size_bytes: Type.Integer(),
};

/**
 * The plan's device entry a run was made for (testplans.schemas.ts DeviceSpec, as stored on the run). Open, as the
 * entry's selectors are the server's business; typed here are the members the agent acts on.
 */
const JobDeviceEntry = Type.Object(
  {
    platform: Type.String(),
    locale: Type.Optional(
      Type.String({ description: "Set before the run (Android: en_US, fr, de_DE); absent: left as it is" }),
    ),
    orientation: Type.Optional(
      Type.Union([Type.Literal("portrait"), Type.Literal("landscape")], {
        description: "Set before the run (Android: settings put system user_rotation); absent: left as it is",
      }),
    ),
  },
  { additionalProperties: true },
);

export const Job = Type.Object({
  lease_id: Type.String(),
  lease_expires_at: Timestamp,
  lease_ttl_seconds: Type.Integer(),
  execution_id: Type.String(),
  device_run: Type.Object({
    id: Type.String(),
    position: Type.Integer(),
    attempt: Type.Integer(),
    max_attempts: Type.Integer(),
    shard: Type.Integer({
      minimum: 0,
      description:
        "Which shard of its device entry this run is (0..shard_count-1). Steps run on the shards below their own shards; inspect and shell steps on shard 0 only",
    }),
    shard_count: Type.Integer({
      minimum: 1,
      description:
        "How many device runs the entry's tests are split over (the largest shards among the plan's steps); 1: not sharded",
    }),
  }),
  plan: Type.Object({}, { additionalProperties: true }),
  package_name: Type.Union([Type.String(), Type.Null()], {
    description:
      "The app's package name; null only for an Appium session (plan.steps[0].type appium) without a registered app",
  }),
  version: Type.Union([Type.String(), Type.Null()], {
    description: "The version ID; null when package_name is",
  }),
  env: Type.Record(Type.String(), Type.String()),
  binary_url: Type.Union([Type.String(), Type.Null()], {
    description:
      "Where to download the version's binary: absolute with TESTBAY_PUBLIC_URL, else a path under this server; null when package_name is",
  }),
  binary: Type.Union(
    [
      Type.Object({
        sha256: Type.String(),
        size_bytes: Type.Integer(),
        metadata: Type.Object({}, { additionalProperties: true }),
      }),
      Type.Null(),
    ],
    { description: "The version's binary; null when package_name is" },
  ),
  test_package: Type.Union(
    [
      Type.Object({
        ...jobTestPackageFields,
        format: Type.Literal("apk", { description: "An instrumentation APK" }),
        test: InstrumentationTest,
      }),
      Type.Object({
        ...jobTestPackageFields,
        format: Type.Literal("xctest", {
          description: "A zip of xcodebuild build-for-testing output (.xctestrun, -Runner.app, test bundles)",
        }),
        test: XctestTest,
      }),
      Type.Null(),
    ],
    { description: "The version's test package by its format, null when it has none" },
  ),
  version_files: Type.Array(
    Type.Object({
      name: Type.String({
        description: "The file's name in the version (PUT …/versions/{version}/files/{name})",
      }),
      size_bytes: Type.Integer(),
      sha256: Type.String(),
      url: Type.String({
        description:
          "Where to download it with the agent's token (GET /v1/agent/jobs/{lease_id}/files/{name}, only while this lease is held); absolute like binary_url",
      }),
    }),
    {
      description:
        "Every file uploaded with the version (API.md §14), by name: what the plan's additional_apks and push[].file name; [] when it has none",
    },
  ),
  device: Type.Union([AgentDevice, Type.Null()]),
  device_entry: Type.Union([JobDeviceEntry, Type.Null()], {
    description:
      "The plan's device entry this run was made for (plan.devices[device_run.position]), with what the agent sets on the device before the run: locale and orientation (API.md §14); null for a run that needs no device",
  }),
});

export const ClaimResponse = Type.Object({ job: Job });

export const LeaseParams = Type.Object({
  lease_id: Type.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9_]+$" }),
});

export const HeartbeatResponse = Type.Object({
  cancel_requested: Type.Boolean(),
  lease_expires_at: Timestamp,
});

const LogEvent = Type.Object(
  {
    seq: Seq,
    type: Type.Literal("log"),
    at: Timestamp,
    stream: Type.Union([Type.Literal("stdout"), Type.Literal("stderr"), Type.Literal("agent")]),
    line: Text(16 * 1024),
  },
  { additionalProperties: false },
);
const StepStarted = Type.Object(
  { seq: Seq, type: Type.Literal("step_started"), at: Timestamp, step_index: StepIndex },
  { additionalProperties: false },
);
const StepFinished = Type.Object(
  {
    seq: Seq,
    type: Type.Literal("step_finished"),
    at: Timestamp,
    step_index: StepIndex,
    status: Type.Union(["passed", "failed", "errored", "cancelled", "skipped"].map((s) => Type.Literal(s))),
    message: Type.Optional(Type.Union([Text(2000), Type.Null()])),
  },
  { additionalProperties: false },
);
const TestCaseEvent = Type.Object(
  {
    seq: Seq,
    type: Type.Literal("test_case"),
    step_index: StepIndex,
    classname: Text(500),
    name: Type.String({ minLength: 1, maxLength: 500 }),
    status: Type.Union(["passed", "failed", "skipped", "errored"].map((s) => Type.Literal(s))),
    duration_ms: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
    message: Type.Optional(Type.Union([Text(4000), Type.Null()])),
    details: Type.Optional(Type.Union([Text(64 * 1024), Type.Null()])),
    artifacts: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 1100 }), {
        maxItems: 20,
        uniqueItems: true,
        description:
          "Names of artifacts of this attempt captured for this test (its failure screenshot, logcat cut, video), uploaded with PUT …/artifacts/{name}",
      }),
    ),
    video_offset_ms: Type.Optional(
      Type.Union([
        Type.Integer({
          minimum: 0,
          maximum: 24 * 3600 * 1000,
          description:
            "How far into the video segment named in artifacts (the .mp4) the test failed, in ms: the moment it was reported less the moment that segment's recording started",
        }),
        Type.Null(),
      ]),
    ),
    retry: Type.Optional(
      Type.Union([
        Type.Integer({
          minimum: 0,
          maximum: 5,
          description:
            "Which try of this test within the attempt: 0 its first run, 1.. its reruns alone (retry_failed_tests); each try is its own test_case event with the same classname and name",
        }),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: false },
);

export const EventsBody = Type.Object(
  {
    events: Type.Array(
      Type.Unsafe<RunEvent>({
        type: "object",
        required: ["type"],
        discriminator: { propertyName: "type" },
        oneOf: [LogEvent, StepStarted, StepFinished, TestCaseEvent],
      }),
      { maxItems: 1000 },
    ),
  },
  { additionalProperties: false },
);

export const EventsResponse = Type.Object({ accepted: Type.Integer(), cancel_requested: Type.Boolean() });

export const CompleteBody = Type.Object(
  {
    status: Type.Union(["passed", "failed", "errored", "cancelled"].map((s) => Type.Literal(s))),
    reason: Type.Optional(
      Type.String({
        pattern: "^[a-z][a-z0-9_]{0,63}$",
        description: "Why, when not passed: timeout, agent_shutdown, step_failed, …",
      }),
    ),
    summary: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description: "Ignored: the server counts the test cases it was sent.",
        },
      ),
    ),
    setup_ms: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 24 * 3600 * 1000,
        description:
          "How long making the device clean before this run took, in ms (API.md §13: a managed emulator's snapshot load or restart, a simulator's erase and boot; the reset after the previous run on the device). Shown as the device run's setup_ms.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const CompleteResponse = Type.Object({
  status: Type.String({
    description: "How the attempt ended (a passed report with failed tests is failed).",
  }),
  requeued: Type.Boolean({ description: "The run went back to the queue for another attempt." }),
  execution_status: Type.String(),
});

/**
 * Artifact names: relative paths of plain segments, nothing that could climb out or hide; at most 1024
 * characters. Up to 16 segments: files pulled from a device keep their device path under pulled/<shard>/
 * (API.md §14), and an app's own storage is already 6 deep (sdcard/Android/data/PKG/files/allure-results/…).
 */
export const artifactNamePattern =
  /^(?=.{1,1024}$)[A-Za-z0-9_][A-Za-z0-9._-]{0,127}(?:\/[A-Za-z0-9_][A-Za-z0-9._-]{0,127}){0,15}$/;

export const ArtifactResponse = Type.Object({
  name: Type.String(),
  size_bytes: Type.Integer(),
  sha256: Type.String(),
  created: Type.Boolean({ description: "false when it replaced an artifact of the same name" }),
});

/**
 * A device as GET /agents shows it: as its agent last described it (API.md §13), with its state. busy while a
 * device run is leased on it; else what the agent said, idle when it said none (older agents), and drained for
 * what an older agent listed in drained_devices.
 */
const ListedDevice = Type.Object({
  serial: Type.String(),
  platform: Type.String(),
  model: Type.String(),
  os_version: Type.String(),
  state: Type.Union(deviceStates.map((s) => Type.Literal(s))),
  api_level: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  abi: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  emulator: Type.Optional(Type.Boolean()),
  managed: Type.Optional(Type.Boolean()),
  pool: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  error: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  boot_ms: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
});

export const AgentList = Type.Object({
  items: Type.Array(
    Type.Object({
      id: Type.String({ description: "The agent_id it claims with" }),
      name: Type.String(),
      serves: Type.Union([Type.Literal("own_organization"), Type.Literal("all_organizations")], {
        description:
          "own_organization: an agent of this organization's agent client. all_organizations: a fleet agent, whose client (testbay-server client create --role agent --all-orgs, perhaps of another organization) claims every organization's runs; it is listed for every organization, its devices busy with other organizations' runs show as busy, and running names only this organization's executions",
      }),
      online: Type.Boolean({
        description: "Seen (a claim or a heartbeat) within the last 75 s: two claim long-polls and a margin",
      }),
      last_seen_at: Timestamp,
      step_types: Type.Array(Type.String()),
      devices: Type.Array(ListedDevice),
      running: Type.Array(Type.String(), { description: "This organization's executions it runs now" }),
      appium: Type.Union([AgentAppium, Type.Null()], {
        description:
          "The Appium an agent started with --appium offers (its version and installed drivers, as its last claim said); null for every other agent",
      }),
    }),
  ),
});

/** A test as a shard's agent lists it: the strings its test_case events will carry. */
const ListedTest = Type.Object(
  {
    classname: Text(500),
    name: Type.String({ minLength: 1, maxLength: 500 }),
  },
  { additionalProperties: false },
);

export const StepParams = Type.Object({
  lease_id: LeaseParams.properties.lease_id,
  step_index: StepIndex,
});

export const ListTestsBody = Type.Object(
  {
    tests: Type.Array(ListedTest, {
      maxItems: 20_000,
      description:
        "Every test the step would run on this device (instrumentation: class and method as listed with -e log true; xcuitest: as its test_case events name them, from which the agent builds -only-testing identifiers; maestro: the flow file name as classname and the flow's name), as its test_case events will name them. Repeats are counted once.",
    }),
  },
  { additionalProperties: false },
);

export const ListTestsResponse = Type.Object({
  planned: Type.Boolean({
    description:
      "This listing made the step's plan (the first of the step's shards to list); false: it was made",
  }),
  differs: Type.Boolean({
    description:
      "This listing names other tests than the one the plan was made from. The plan stands: the batches hold its tests",
  }),
  batches: Type.Integer({ description: "The plan's batches" }),
  tests: Type.Integer({ description: "The plan's distinct tests" }),
  sharding: Type.Union([Type.Literal("duration"), Type.Literal("uniform")]),
});

export const NextBatchBody = Type.Object(
  {
    finished_batch_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          "The batch this agent just ran and reported: it is done (ignored unless this lease holds it)",
      }),
    ),
    take: Type.Optional(
      Type.Boolean({
        default: true,
        description:
          "false: only mark finished_batch_id done and take no batch (batch is null), for an agent that stops taking batches (its step ran out of time): a batch taken then would sit held until the attempt ends, while the other shards may have finished",
      }),
    ),
  },
  { additionalProperties: false },
);

export const NextBatchResponse = Type.Object({
  batch: Type.Union(
    [
      Type.Object({
        id: Type.String(),
        tests: Type.Array(Type.Object({ classname: Type.String(), name: Type.String() })),
      }),
      Type.Null(),
    ],
    { description: "The tests to run next, as one exact list; null: none is left for this shard" },
  ),
});

/** How the agent says the Appium session of its job was created, or not (docs/appium-relay.md, step 2). */
export const SessionReportBody = Type.Union([
  Type.Object(
    {
      status: Type.Literal("ready"),
      capabilities: Type.Object(
        {},
        { additionalProperties: true, description: "The capabilities Appium answered the new session with" },
      ),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      status: Type.Literal("failed"),
      error: Type.String({
        minLength: 1,
        maxLength: 100,
        description: "The W3C error code to answer the client with (Appium's own, or session not created)",
      }),
      message: Type.String({ maxLength: 10_000, description: "Why, as the client will read it" }),
    },
    { additionalProperties: false },
  ),
]);

export const SessionReportResponse = Type.Object({
  state: Type.Union(
    ["queued", "ready", "failed", "ended"].map((s) => Type.Literal(s)),
    {
      description:
        "The session's state once the report was taken: what it said, or what the session had already become (a session that failed, ended or was cancelled meanwhile stays so: stop it)",
    },
  ),
});
