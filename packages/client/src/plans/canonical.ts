import { type PlanContent, type PlanEntry, type PlanField, planFields, withDefaults } from "./plans-file.ts";

/**
 * JSON with every object's keys sorted: two values that differ only in key order (a file edited by hand
 * against what the server echoes back) give the same text. Arrays keep their order: steps run in order and
 * each device entry is a device run of its own.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, sortKeys(v)]),
  );
}

/** The fields in which the file's plan differs from the server's, defaults filled in on both sides. */
export function changedFields(
  wanted: PlanEntry,
  current: Partial<PlanContent> & Pick<PlanEntry, "steps">,
): PlanField[] {
  const a = withDefaults(wanted);
  const b = withDefaults(current);
  return planFields.filter((field) => canonicalJson(a[field]) !== canonicalJson(b[field]));
}
