// Which device runs get a <testsuite> in GET /executions/{id}/junit: a shard left without tests (more shards than
// tests, or the other shards took every batch) writes none, unless no run of the execution reported a test.
import { describe, expect, it } from "vitest";
import type { DeviceRunRecord } from "./executions.repo.ts";
import { junitReport } from "./junit-report.ts";
import type { StoredTestCase } from "./results.repo.ts";
import { sampleDeviceRun, sampleExecution } from "./sample-records.fixture.ts";

const shard = (index: number, shardCount = 2): DeviceRunRecord =>
  sampleDeviceRun({
    id: `dr_${index + 1}`,
    device: { platform: "android", os_version: "14" },
    shard: index,
    shardCount,
  });

const execution = (runs: DeviceRunRecord[]) =>
  sampleExecution({ plan: { name: "espresso" }, deviceRuns: runs });

const passed = (deviceRunId: string, name: string): StoredTestCase => ({
  deviceRunId,
  attempt: 1,
  stepIndex: 0,
  classname: "com.example.basic.LoginTest",
  name,
  status: "passed",
  durationMs: 1500,
  message: null,
  details: null,
  artifacts: [],
  videoOffsetMs: null,
  retry: null,
});

const suiteTags = (xml: string) => xml.match(/<testsuite [^>]*>/g) ?? [];

describe("the JUnit report of a sharded execution", () => {
  it("leaves out a shard that ran no test: no empty testsuite", () => {
    const xml = junitReport(execution([shard(0), shard(1)]), [
      passed("dr_1", "signsIn"),
      passed("dr_1", "signsOut"),
    ]);
    expect(suiteTags(xml)).toEqual([
      '<testsuite name="device 1, shard 1 of 2: android 14 (attempt 1)" tests="2" failures="0" errors="0" skipped="0" timestamp="2026-11-24T10:00:01.000Z">',
    ]);
    expect(xml).not.toContain('tests="0"');
    expect(xml).toContain('<testsuites name="espresso" tests="2" failures="0" errors="0" skipped="0">');
  });

  it("keeps every shard that ran a test", () => {
    const xml = junitReport(execution([shard(0, 3), shard(1, 3), shard(2, 3)]), [
      passed("dr_1", "signsIn"),
      passed("dr_3", "signsOut"),
    ]);
    expect(suiteTags(xml).map((tag) => /name="([^"]*)"/.exec(tag)?.[1])).toEqual([
      "device 1, shard 1 of 3: android 14 (attempt 1)",
      "device 1, shard 3 of 3: android 14 (attempt 1)",
    ]);
  });

  it("keeps each device run's empty suite when no run reported a test, so the report still names them", () => {
    const xml = junitReport(execution([shard(0), shard(1)]), []);
    expect(suiteTags(xml)).toHaveLength(2);
    expect(xml).toContain('<testsuites name="espresso" tests="0" failures="0" errors="0" skipped="0">');
  });
});
