import { type AgentEvent, type ErrorCode, TestbayApiError } from "@testbay/client";
import { expect, it } from "vitest";
import { EventReporter } from "./event-reporter.ts";

const eventsPath = "/agent/jobs/lease_1/events";
const answered = (status: number, code: ErrorCode) =>
  new TestbayApiError({ status, problem: { code }, method: "POST", path: eventsPath });

/** A server that answers the first sends with `failures`, then stores what it gets. */
function server(failures: Error[]) {
  const stored: AgentEvent[] = [];
  let sends = 0;
  const reporter = new EventReporter({
    send: async (events) => {
      sends++;
      const failure = failures.shift();
      if (failure) throw failure;
      stored.push(...events);
      return { cancel_requested: false };
    },
    onCancelRequested: () => {},
  });
  return { reporter, stored, sends: () => sends };
}

const line = (text: string) =>
  ({ type: "log", at: "2026-11-29T00:00:00.000Z", stream: "stdout", line: text }) as const;
const never = new AbortController().signal;

it("sends a job's last lines again after an answer 500 until the server has them", async () => {
  const { reporter, stored, sends } = server([
    answered(500, "internal_error"),
    answered(503, "service_unavailable"),
  ]);
  reporter.push(line("released by first.go"));

  await reporter.flushAll(never, { firstPauseMs: 1 });

  expect(stored.map((e) => e.type === "log" && e.line)).toEqual(["released by first.go"]);
  expect(sends()).toBe(3);
  expect(reporter.failure).toBeUndefined();
});

it("throws the last failure when the events are still unsent after every try, so the job is not completed", async () => {
  const { reporter, sends } = server(Array.from({ length: 10 }, () => answered(500, "internal_error")));
  reporter.push(line("a line the server never got"));

  await expect(reporter.flushAll(never, { tries: 3, firstPauseMs: 1 })).rejects.toThrow(/internal_error/);
  expect(sends()).toBe(3);
});

it("does not send again what the server refused (4xx): the job goes on to complete", async () => {
  const { reporter, sends } = server([answered(409, "lease_lost")]);
  reporter.push(line("after the lease was lost"));

  await reporter.flushAll(never, { firstPauseMs: 1 });

  expect(sends()).toBe(1);
  expect(reporter.failure).toBeInstanceOf(TestbayApiError);
});
