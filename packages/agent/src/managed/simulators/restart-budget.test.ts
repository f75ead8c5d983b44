import { describe, expect, it } from "vitest";
import { RestartBudget } from "./restart-budget.ts";

const MINUTE = 60_000;

describe("RestartBudget", () => {
  it("allows three restarts within an hour (four launches in all), then none", () => {
    let now = 0;
    const budget = new RestartBudget(() => now);
    expect([budget.take(), budget.take(), budget.take()]).toEqual([true, true, true]);
    now = 59 * MINUTE;
    expect(budget.take()).toBe(false);
    expect(budget.used).toBe(3);
  });

  it("gives a restart back once the hour since it has passed", () => {
    let now = 0;
    const budget = new RestartBudget(() => now);
    budget.take();
    now = 10 * MINUTE;
    budget.take();
    now = 20 * MINUTE;
    budget.take();
    now = 60 * MINUTE; // the first restart is an hour old
    expect(budget.take()).toBe(true);
    expect(budget.take()).toBe(false);
    now = 70 * MINUTE;
    expect(budget.take()).toBe(true);
  });

  it("keeps mending a simulator that breaks now and then", () => {
    let now = 0;
    const budget = new RestartBudget(() => now);
    for (let day = 0; day < 30; day++) {
      now = day * 24 * 60 * MINUTE;
      expect(budget.take()).toBe(true);
    }
    expect(budget.used).toBe(1);
  });
});
