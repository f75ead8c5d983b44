/**
 * An agent's attempt at a device run as the tests of results need one: claim it on a device, report test cases
 * (each test with its tries, retry 0, 1, …, as an agent with retry_failed_tests does), complete it failed when a
 * test's last try failed. Spoken over HTTP like a real agent; no device involved.
 */
import { expect } from "vitest";
import { call, type TestServer } from "./harness.ts";

/** A test's tries in one attempt: its name, then each try's status. */
export type Tries = [name: string, ...statuses: Array<"passed" | "failed">];

export const pixel7 = { serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" };

export interface AttemptOptions {
  device?: typeof pixel7;
  classname?: string;
  stepTypes?: string[];
}

/** Claims the next run for `device` as agent rack-1 (a Pixel 7 and maestro steps unless said); its lease's id. */
export async function claimNext(
  server: TestServer,
  agent: Record<string, string>,
  { device = pixel7, stepTypes = ["maestro"] }: Pick<AttemptOptions, "device" | "stepTypes"> = {},
): Promise<string> {
  const claimed = await call(`${server.baseUrl}/agent/claim`, {
    headers: agent,
    json: { agent_id: "rack-1", devices: [device], step_types: stepTypes },
  });
  expect(claimed.status).toBe(200);
  return claimed.body.job.lease_id;
}

/** Claims the next run for `device`, reports `tests` and completes; the completion's answer. */
export async function reportAttempt(
  server: TestServer,
  agent: Record<string, string>,
  tests: Tries[],
  options: AttemptOptions = {},
): Promise<{ status: string; requeued: boolean; execution_status: string }> {
  const { classname = "com.example.CartTest" } = options;
  const lease = await claimNext(server, agent, options);
  let seq = 0;
  const events = tests.flatMap(([name, ...statuses]) =>
    statuses.map((status, retry) => ({
      seq: ++seq,
      type: "test_case",
      step_index: 0,
      classname,
      name,
      status,
      retry,
      duration_ms: 1000,
      message: status === "failed" ? `${name} broke` : null,
    })),
  );
  const sent = await call(`${server.baseUrl}/agent/jobs/${lease}/events`, {
    headers: agent,
    json: { events },
  });
  expect(sent.status).toBe(200);
  const failed = tests.some((tries) => tries.at(-1) === "failed");
  const done = await call(`${server.baseUrl}/agent/jobs/${lease}/complete`, {
    headers: agent,
    json: { status: failed ? "failed" : "passed" },
  });
  expect(done.status).toBe(200);
  return done.body;
}
