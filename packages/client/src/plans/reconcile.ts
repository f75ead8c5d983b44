import type { TestPlan } from "../sdk/models.ts";
import { changedFields } from "./canonical.ts";
import type { PlanEntry, PlanField, PlansFile } from "./plans-file.ts";

/** What apply does to one plan. `index` is the plan's place in the file, for errors at its line. */
export type PlanAction =
  | { kind: "create"; name: string; index: number; entry: PlanEntry }
  | { kind: "update"; name: string; index: number; entry: PlanEntry; id: string; changed: PlanField[] }
  | { kind: "unchanged"; name: string; index: number; id: string }
  /** An archived plan of that name: restored, and updated too when `changed` is not empty. */
  | { kind: "restore"; name: string; index: number; entry: PlanEntry; id: string; changed: PlanField[] }
  /** --prune: an active plan the file does not name. */
  | { kind: "archive"; name: string; id: string };

/** A name that matches more than one of the server's plans: apply cannot tell which one the file means. */
export interface NameConflict {
  name: string;
  index: number;
  ids: string[];
  state: "active" | "archived";
}

/**
 * Matches the file's plans to the server's by name and says what to do with each; pure, so --dry-run and
 * apply print the same thing. An active plan of the name is the one meant, even when archived plans share the
 * name (those are history); two active ones, or no active and two archived, are a conflict.
 */
export function reconcile(
  file: PlansFile,
  server: TestPlan[],
  options: { prune: boolean },
): { actions: PlanAction[]; conflicts: NameConflict[] } {
  const actions: PlanAction[] = [];
  const conflicts: NameConflict[] = [];
  file.plans.forEach((entry, index) => {
    const named = server.filter((p) => p.name === entry.name);
    const active = named.filter((p) => p.state === "active");
    const archived = named.filter((p) => p.state === "archived");
    const candidates = active.length > 0 ? active : archived;
    const [match] = candidates;
    if (!match) {
      actions.push({ kind: "create", name: entry.name, index, entry });
    } else if (candidates.length > 1) {
      const state = active.length > 0 ? "active" : "archived";
      conflicts.push({ name: entry.name, index, ids: candidates.map((p) => p.id).sort(), state });
    } else {
      const changed = changedFields(entry, match);
      if (match.state === "archived") {
        actions.push({ kind: "restore", name: entry.name, index, entry, id: match.id, changed });
      } else if (changed.length > 0) {
        actions.push({ kind: "update", name: entry.name, index, entry, id: match.id, changed });
      } else {
        actions.push({ kind: "unchanged", name: entry.name, index, id: match.id });
      }
    }
  });
  if (options.prune) {
    const kept = new Set(file.plans.map((p) => p.name));
    const extra = server
      .filter((p) => p.state === "active" && !kept.has(p.name))
      .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
    for (const plan of extra) actions.push({ kind: "archive", name: plan.name, id: plan.id });
  }
  return { actions, conflicts };
}
