import type { ShardBatch, ShardTest, Step } from "@testbay/client";
import { describe, expect, it } from "vitest";
import {
  type BatchRan,
  runShardBatches,
  skippedOnShard,
  stepSharding,
  takesBatches,
} from "./shard-batches.ts";
import type { ShardContext } from "./step-types.ts";

const instrumentation = (shards?: number, sharding?: "duration" | "uniform") =>
  ({ type: "instrumentation", ...(shards ? { shards } : {}), ...(sharding ? { sharding } : {}) }) as Step;
const shell = { type: "shell", run: "true" } as Step;
const inspect = { type: "inspect", checks: [] } as unknown as Step;

describe("stepSharding", () => {
  it("is 1 shard by duration unless the step says otherwise", () => {
    expect(stepSharding(instrumentation())).toEqual({ shards: 1, sharding: "duration" });
    expect(stepSharding(instrumentation(3, "uniform"))).toEqual({ shards: 3, sharding: "uniform" });
    expect(stepSharding(shell)).toEqual({ shards: 1, sharding: "duration" });
  });
});

describe("skippedOnShard (rule 1)", () => {
  it("runs every step when the device run is not sharded", () => {
    for (const step of [instrumentation(), shell, inspect]) {
      expect(skippedOnShard(step, { index: 0, count: 1 })).toBeNull();
      expect(skippedOnShard(step, undefined)).toBeNull();
    }
  });

  it("runs steps that do not split tests on shard 0 only", () => {
    expect(skippedOnShard(shell, { index: 0, count: 3 })).toBeNull();
    expect(skippedOnShard(inspect, { index: 0, count: 3 })).toBeNull();
    expect(skippedOnShard(shell, { index: 1, count: 3 })).toBe("shell steps run on shard 0 only");
    expect(skippedOnShard(inspect, { index: 2, count: 3 })).toBe("inspect steps run on shard 0 only");
  });

  it("runs a step with k shards on shards below k only", () => {
    const two = instrumentation(2);
    expect([0, 1, 2].map((index) => skippedOnShard(two, { index, count: 3 }))).toEqual([
      null,
      null,
      "this step has 2 shards; this device run is shard 2",
    ]);
    expect(skippedOnShard(instrumentation(), { index: 1, count: 3 })).toBe(
      "this step has no shards; this device run is shard 1",
    );
    // A maestro step's flows split like tests.
    const maestro = { type: "maestro", flows: ["- launchApp"], shards: 3 } as Step;
    expect(skippedOnShard(maestro, { index: 2, count: 3 })).toBeNull();
    expect(skippedOnShard({ ...maestro, shards: 2 } as Step, { index: 2, count: 3 })).toBe(
      "this step has 2 shards; this device run is shard 2",
    );
    expect(skippedOnShard({ type: "shell", run: "true" } as Step, { index: 2, count: 3 })).toBe(
      "shell steps run on shard 0 only",
    );
  });
});

describe("takesBatches", () => {
  const shard = (count: number) => ({ index: 0, count }) as ShardContext;
  it("is true in a sharded device run, or for a step with shards; never without a job's shard", () => {
    expect(takesBatches(instrumentation(), shard(1))).toBe(false);
    expect(takesBatches(instrumentation(), shard(3))).toBe(true);
    expect(takesBatches(instrumentation(2), shard(1))).toBe(true);
    expect(takesBatches(instrumentation(2), undefined)).toBe(false);
  });
});

/** A fake of the server's half: the first listing plans fixed batches; next-batch hands them out in order. */
function fakeServer(batches: ShardTest[][]) {
  const calls: string[] = [];
  let planned: ShardTest[] | null = null;
  const queue = batches.map((tests, i) => ({ id: `b${i + 1}`, tests, state: "queued" }));
  const shard = (index: number): ShardContext => ({
    index,
    count: 2,
    listTests: async (tests) => {
      calls.push(`${index}: list ${tests.length}`);
      const first = planned === null;
      planned ??= tests;
      return {
        planned: first,
        differs: !first && JSON.stringify(planned) !== JSON.stringify(tests),
        batches: queue.length,
        tests: planned.length,
        sharding: "duration",
      };
    },
    nextBatch: async (finished, options) => {
      const take = options?.take ?? true;
      calls.push(`${index}: ${take ? "next" : "finish"}${finished ? ` after ${finished}` : ""}`);
      const done = queue.find((b) => b.id === finished);
      if (done) done.state = "done";
      if (!take) return null;
      const next = queue.find((b) => b.state === "queued");
      if (!next) return null;
      next.state = "running";
      return { id: next.id, tests: next.tests };
    },
  });
  return { shard, calls, queue };
}

const t = (name: string): ShardTest => ({ classname: "a.T", name });

describe("runShardBatches", () => {
  it("lists, then runs batch after batch, marking each done as it takes the next, until none is left", async () => {
    const server = fakeServer([[t("a"), t("b")], [t("c")]]);
    const log: string[] = [];
    const ran: string[] = [];
    const done = await runShardBatches(
      server.shard(0),
      [t("a"), t("b"), t("c")],
      (l) => log.push(l),
      async (batch) => {
        ran.push(batch.tests.map((x) => x.name).join(","));
        return { ran: true };
      },
    );
    expect(ran).toEqual(["a,b", "c"]);
    expect(done).toEqual({ stopped: null, batches: 2, tests: 3 });
    expect(server.calls).toEqual(["0: list 3", "0: next", "0: next after b1", "0: next after b2"]);
    expect(server.queue.map((b) => b.state)).toEqual(["done", "done"]);
    expect(log[0]).toBe("shard 1 of 2: planned 3 tests in 2 batches (duration)");
  });

  it("two shards share the queue: disjoint batches, all of them run; the second listing hears the plan stands", async () => {
    const server = fakeServer([[t("a")], [t("b")], [t("c")], [t("d")]]);
    const ranBy: Record<number, string[]> = { 0: [], 1: [] };
    const logs: string[] = [];
    const run = (index: number) =>
      runShardBatches(
        server.shard(index),
        [t("a"), t("b"), t("c"), t("d")],
        (l) => logs.push(l),
        async (batch) => {
          ranBy[index]?.push(...batch.tests.map((x) => x.name));
          await new Promise((resolve) => setImmediate(resolve));
          return { ran: true };
        },
      );
    await Promise.all([run(0), run(1)]);
    const all = [...(ranBy[0] ?? []), ...(ranBy[1] ?? [])].sort();
    expect(all).toEqual(["a", "b", "c", "d"]);
    expect(ranBy[0]?.length).toBeGreaterThan(0);
    expect(ranBy[1]?.length).toBeGreaterThan(0);
    expect(logs).toContain("shard 2 of 2: the plan stands: 4 tests in 4 batches (duration)");
  });

  it("says so when this shard's listing differs from the plan, and runs the plan's tests", async () => {
    const server = fakeServer([[t("a")]]);
    await server.shard(0).listTests([t("a")]);
    const logs: string[] = [];
    await runShardBatches(
      server.shard(1),
      [t("a"), t("x")],
      (l) => logs.push(l),
      async () => ({ ran: true }),
    );
    expect(logs).toContain("this device listed other tests than the plan was made of; running the plan's");
  });

  it("stops at a batch that stops (device lost) without marking it done: the server hands it on", async () => {
    const server = fakeServer([[t("a")], [t("b")]]);
    const lost = { status: "errored" as const, message: "device x was lost", deviceLost: true };
    const done = await runShardBatches(
      server.shard(0),
      [t("a"), t("b")],
      () => {},
      async () => ({ stop: lost }),
    );
    expect(done.stopped).toBe(lost);
    expect(server.queue.map((b) => b.state)).toEqual(["running", "queued"]);
  });

  it("after a last batch (out of time) marks it done and takes no other batch: the rest stay queued for the others", async () => {
    const server = fakeServer([[t("a")], [t("b")], [t("c")]]);
    const ran: string[] = [];
    const done = await runShardBatches(
      server.shard(0),
      [],
      () => {},
      async (batch: ShardBatch): Promise<BatchRan> => {
        ran.push(batch.id);
        return { ran: true, last: true };
      },
    );
    expect(ran).toEqual(["b1"]);
    expect(done.stopped).toBeNull();
    expect(server.calls).toEqual(["0: list 0", "0: next", "0: finish after b1"]);
    expect(server.queue.map((b) => b.state)).toEqual(["done", "queued", "queued"]);
  });

  it("errors when a server call fails, and says which", async () => {
    const failing: ShardContext = {
      index: 0,
      count: 2,
      listTests: async () => {
        throw new Error("503 unavailable");
      },
      nextBatch: async () => null,
    };
    const done = await runShardBatches(
      failing,
      [t("a")],
      () => {},
      async () => ({ ran: true }),
    );
    expect(done.stopped).toEqual({
      status: "errored",
      message: "listing the tests to the server failed: 503 unavailable",
    });
    const server = fakeServer([[t("a")]]);
    const broken = {
      ...server.shard(0),
      nextBatch: () => Promise.reject(new Error("409 shard_plan_missing")),
    };
    expect(
      (
        await runShardBatches(
          broken,
          [t("a")],
          () => {},
          async () => ({ ran: true }),
        )
      ).stopped,
    ).toEqual({
      status: "errored",
      message: "taking the next batch of tests failed: 409 shard_plan_missing",
    });
  });

  it("a shard that finds the queue empty runs nothing and says why", async () => {
    const server = fakeServer([]);
    const logs: string[] = [];
    const done = await runShardBatches(
      server.shard(1),
      [t("a")],
      (l) => logs.push(l),
      async () => ({ ran: true }),
    );
    expect(done).toEqual({ stopped: null, batches: 0, tests: 0 });
    expect(logs.at(-1)).toBe("no batch was left for this shard: the other shards ran every test");
  });
});
