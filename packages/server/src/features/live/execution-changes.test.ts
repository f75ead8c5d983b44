import { afterEach, describe, expect, it, vi } from "vitest";
import { type ExecutionChange, ExecutionChanges } from "./execution-changes.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("ExecutionChanges", () => {
  it("coalesces a burst of changes of one execution into one hint, sent after the window", () => {
    vi.useFakeTimers();
    const changes = new ExecutionChanges({ coalesceMs: 200 });
    const seen: ExecutionChange[] = [];
    changes.subscribe("org_a", (change) => seen.push(change));
    for (let i = 0; i < 50; i++) changes.changed("org_a", "ex_1");
    changes.changed("org_a", "ex_2");
    expect(seen).toEqual([]);
    vi.advanceTimersByTime(200);
    expect(seen).toEqual([
      { organizationId: "org_a", executionId: "ex_1" },
      { organizationId: "org_a", executionId: "ex_2" },
    ]);
    // A change after the window is a new hint: the last change of a run is never swallowed.
    changes.changed("org_a", "ex_1");
    vi.advanceTimersByTime(200);
    expect(seen).toHaveLength(3);
  });

  it("tells only the listeners of the execution's organization, until they unsubscribe", () => {
    vi.useFakeTimers();
    const changes = new ExecutionChanges({ coalesceMs: 10 });
    const a: ExecutionChange[] = [];
    const b: ExecutionChange[] = [];
    const stopA = changes.subscribe("org_a", (change) => a.push(change));
    changes.subscribe("org_b", (change) => b.push(change));
    changes.changed("org_a", "ex_1");
    changes.changed("org_b");
    vi.advanceTimersByTime(10);
    expect(a).toEqual([{ organizationId: "org_a", executionId: "ex_1" }]);
    expect(b).toEqual([{ organizationId: "org_b", executionId: null }]);
    stopA();
    changes.changed("org_a", "ex_1");
    vi.advanceTimersByTime(10);
    expect(a).toHaveLength(1);
  });

  it("hands hints to a broadcast and takes back what arrives, ignoring what it cannot read", () => {
    vi.useFakeTimers();
    const sent: string[] = [];
    const changes = new ExecutionChanges({ coalesceMs: 10, broadcast: (message) => sent.push(message) });
    const seen: ExecutionChange[] = [];
    changes.subscribe("org_a", (change) => seen.push(change));
    changes.changed("org_a", "ex_1");
    vi.advanceTimersByTime(10);
    // Nothing is delivered here until the message comes back (as it does from PostgreSQL to every instance).
    expect(seen).toEqual([]);
    expect(sent).toHaveLength(1);
    for (const message of [...sent, "not json", '{"e":"ex_1"}', "null"]) changes.receive(message);
    expect(seen).toEqual([{ organizationId: "org_a", executionId: "ex_1" }]);
  });

  it("sends nothing once closed", () => {
    vi.useFakeTimers();
    const changes = new ExecutionChanges({ coalesceMs: 10 });
    const seen: ExecutionChange[] = [];
    changes.subscribe("org_a", (change) => seen.push(change));
    changes.changed("org_a", "ex_1");
    changes.close();
    vi.advanceTimersByTime(50);
    expect(seen).toEqual([]);
  });
  it("tells observers of every change made here at once, of any organization, but not of other instances' hints", () => {
    vi.useFakeTimers();
    const changes = new ExecutionChanges({ coalesceMs: 200, broadcast: () => {} });
    const observed: ExecutionChange[] = [];
    const stop = changes.observe((change) => observed.push(change));
    changes.changed("org_a", "ex_1");
    changes.changed("org_a", "ex_1");
    changes.changed("org_b");
    expect(observed).toEqual([
      { organizationId: "org_a", executionId: "ex_1" },
      { organizationId: "org_a", executionId: "ex_1" },
      { organizationId: "org_b", executionId: null },
    ]);
    changes.receive(JSON.stringify({ o: "org_c", e: "ex_9" }));
    stop();
    changes.changed("org_a", "ex_2");
    expect(observed).toHaveLength(3);
  });
});
