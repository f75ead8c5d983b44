/**
 * An execution and its device run as executions.repo.ts reads them, for unit tests of what is built from them
 * (JUnit, the report, test-case views): the fields no such test looks at set once here, each test overriding
 * only those it is about.
 */
import type { DeviceRunRecord, ExecutionRecord } from "./executions.repo.ts";

/** A finished device run of ex_1 on an Android Pixel 7: dr_1, passed, first attempt. */
export function sampleDeviceRun(overrides: Partial<DeviceRunRecord> = {}): DeviceRunRecord {
  return {
    id: "dr_1",
    executionId: "ex_1",
    position: 0,
    device: { platform: "android", model: "Pixel 7", os_version: "14" },
    status: "passed",
    attempt: 1,
    createdAt: "2026-11-24T10:00:00.000Z",
    startedAt: "2026-11-24T10:00:01.000Z",
    finishedAt: "2026-11-24T10:01:00.000Z",
    reason: null,
    summary: null,
    agentId: "agent-1",
    claimedDevice: null,
    steps: [],
    ...overrides,
  };
}

/** Execution ex_1 of com.example.basic 1.0.0, passed, triggered by a CI client, with no device runs unless given. */
export function sampleExecution(overrides: Partial<ExecutionRecord> = {}): ExecutionRecord {
  return {
    id: "ex_1",
    organizationId: "org_1",
    testPlanId: "tp_1",
    appVersionId: "av_1",
    packageName: "com.example.basic",
    version: "1.0.0",
    status: "passed",
    plan: { name: "smoke" },
    env: {},
    summary: { tests: 0, passed: 0, failed: 0, skipped: 0, flaky: 0 },
    cancelRequested: false,
    triggeredBy: "ci",
    triggeredByPerson: null,
    createdAt: "2026-11-24T10:00:00.000Z",
    startedAt: null,
    finishedAt: null,
    ci: null,
    deviceRuns: [],
    ...overrides,
  };
}
