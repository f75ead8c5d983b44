import { describe, expect, it } from "vitest";
import type { TestPlan } from "../sdk/models.ts";
import { reconcile } from "./reconcile.ts";

const steps: TestPlan["steps"] = [{ type: "inspect", expect: { debuggable: false } }];

function serverPlan(
  id: string,
  name: string,
  state: TestPlan["state"],
  extra: Partial<TestPlan> = {},
): TestPlan {
  return {
    id,
    name,
    package_name: "com.example.shop",
    state,
    devices: [],
    steps,
    timeout_seconds: 1800,
    max_attempts: 1,
    created_at: "2026-01-01T00:00:00Z",
    updated_at: "2026-01-01T00:00:00Z",
    ...extra,
  };
}

describe("reconcile", () => {
  it("creates, updates, leaves alone, restores and (with prune) archives, by name", () => {
    const file = {
      app: "com.example.shop",
      plans: [
        { name: "new", steps },
        { name: "same", steps },
        { name: "longer", steps, timeout_seconds: 3600 },
        { name: "shelved", steps },
      ],
    };
    const server = [
      serverPlan("tp_1", "same", "active"),
      serverPlan("tp_2", "longer", "active"),
      serverPlan("tp_3", "shelved", "archived", { max_attempts: 2 }),
      serverPlan("tp_4", "gone", "active"),
      serverPlan("tp_5", "old", "archived"),
    ];
    const kept = reconcile(file, server, { prune: false });
    expect(kept.conflicts).toEqual([]);
    expect(kept.actions.map((a) => [a.kind, a.name])).toEqual([
      ["create", "new"],
      ["unchanged", "same"],
      ["update", "longer"],
      ["restore", "shelved"],
    ]);
    expect(kept.actions[2]).toMatchObject({ id: "tp_2", changed: ["timeout_seconds"] });
    expect(kept.actions[3]).toMatchObject({ id: "tp_3", changed: ["max_attempts"] });
    const pruned = reconcile(file, server, { prune: true });
    expect(pruned.actions.at(-1)).toEqual({ kind: "archive", name: "gone", id: "tp_4" });
    expect(pruned.actions).toHaveLength(5);
  });

  it("prefers the active plan of a name over archived ones, and reports two active ones as a conflict", () => {
    const file = {
      app: "com.example.shop",
      plans: [
        { name: "smoke", steps },
        { name: "twice", steps },
      ],
    };
    const server = [
      serverPlan("tp_1", "smoke", "archived"),
      serverPlan("tp_2", "smoke", "active"),
      serverPlan("tp_4", "twice", "active"),
      serverPlan("tp_3", "twice", "active"),
    ];
    const { actions, conflicts } = reconcile(file, server, { prune: false });
    expect(actions).toEqual([{ kind: "unchanged", name: "smoke", index: 0, id: "tp_2" }]);
    expect(conflicts).toEqual([{ name: "twice", index: 1, ids: ["tp_3", "tp_4"], state: "active" }]);
  });
});
