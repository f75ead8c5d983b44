/**
 * The one rule of a plan device entry's selectors (API.md §13 "Choosing devices"): `api_level_min`,
 * `api_level_max`, `os_version_min`, `os_version_max`, `models` (any of), `abi`, `emulator` and `labels` (all of).
 *
 * Each selector is a row of `selectorRules`: what of the entry and what of the device it compares, and which of
 * five comparisons. The comparisons are written once in each of the two forms the server needs: SQL over
 * device_runs for a claim (claim-query.ts, with the device's values as parameters, so the same text runs on
 * SQLite and PostgreSQL) and JavaScript for the waiting reason and `shards: "auto"` (executions/waiting-reason.ts,
 * auto-shards.ts), so the three cannot disagree about which device a selector admits. A device that does not say
 * a fact (an older agent: no api_level, no abi) meets no selector on it.
 *
 * OS versions compare as versions, a component at a time and numerically (9 < 10 < 10.1, and 10 = 10.0), through
 * `versionKey`: digits that sort as the versions do, the same in JavaScript and in both databases.
 */
import { type RawBuilder, sql } from "kysely";
import type { AgentDevice, DeviceState } from "./types.ts";

/** The selectors of a plan's device entry, as the plan names them (testplans.schemas.ts DeviceSpec). */
export interface DeviceSelectors {
  api_level_min?: number;
  api_level_max?: number;
  os_version_min?: string;
  os_version_max?: string;
  models?: string[];
  abi?: string;
  emulator?: boolean;
  labels?: Record<string, string>;
}

/** What a device run keeps of its entry's selectors: its columns (migration 0029) and its selector values. */
export interface StoredSelectors {
  required_api_level_min: number | null;
  required_api_level_max: number | null;
  required_os_version_min: string | null;
  required_os_version_max: string | null;
  required_abi: string | null;
  required_emulator: number | null;
  models: string[];
  /** KEY=VALUE */
  labels: string[];
}

type Scalar = number | string | null;

/**
 * at_least / at_most: the device's value is at least (at most) the entry's; equals; any_of: the device's value
 * is one of the entry's; all_of: each of the entry's values is one of the device's.
 */
type Comparison =
  | { kind: "at_least" | "at_most" | "equals"; column: ScalarColumn }
  | { kind: "any_of" | "all_of"; column: "required_models" | "required_labels"; values: "model" | "label" };

type ScalarColumn =
  | "required_api_level_min"
  | "required_api_level_max"
  | "required_os_version_min"
  | "required_os_version_max"
  | "required_abi"
  | "required_emulator";

interface SelectorRule {
  /** As the plan names it. */
  name: keyof DeviceSelectors;
  comparison: Comparison;
  /** The device's side of the comparison (a list for any_of and all_of). */
  ofDevice(device: AgentDevice): Scalar | string[];
  /** How a waiting reason says what the entry asks: "api_level ≥ 35". */
  asked(selectors: DeviceSelectors): string;
  /** How a waiting reason says what a device has: "33". */
  has(device: AgentDevice): string;
}

export const selectorRules: readonly SelectorRule[] = [
  {
    name: "api_level_min",
    comparison: { kind: "at_least", column: "required_api_level_min" },
    ofDevice: (d) => d.api_level ?? null,
    asked: (s) => `api_level ≥ ${s.api_level_min}`,
    has: (d) => (d.api_level == null ? "unknown" : String(d.api_level)),
  },
  {
    name: "api_level_max",
    comparison: { kind: "at_most", column: "required_api_level_max" },
    ofDevice: (d) => d.api_level ?? null,
    asked: (s) => `api_level ≤ ${s.api_level_max}`,
    has: (d) => (d.api_level == null ? "unknown" : String(d.api_level)),
  },
  {
    name: "os_version_min",
    comparison: { kind: "at_least", column: "required_os_version_min" },
    ofDevice: (d) => versionKey(d.os_version),
    asked: (s) => `OS version ≥ ${s.os_version_min}`,
    has: (d) => d.os_version,
  },
  {
    name: "os_version_max",
    comparison: { kind: "at_most", column: "required_os_version_max" },
    ofDevice: (d) => versionKey(d.os_version),
    asked: (s) => `OS version ≤ ${s.os_version_max}`,
    has: (d) => d.os_version,
  },
  {
    name: "models",
    comparison: { kind: "any_of", column: "required_models", values: "model" },
    ofDevice: (d) => [d.model],
    asked: (s) => `models ${(s.models ?? []).join(" or ")}`,
    has: (d) => d.model,
  },
  {
    name: "abi",
    comparison: { kind: "equals", column: "required_abi" },
    ofDevice: (d) => d.abi ?? null,
    asked: (s) => `abi ${s.abi}`,
    has: (d) => d.abi ?? "unknown",
  },
  {
    name: "emulator",
    comparison: { kind: "equals", column: "required_emulator" },
    ofDevice: (d) => (d.emulator === undefined ? null : d.emulator ? 1 : 0),
    asked: (s) => `emulator ${s.emulator}`,
    has: (d) => (d.emulator === undefined ? "unknown" : d.emulator ? "emulator" : "real device"),
  },
  {
    name: "labels",
    comparison: { kind: "all_of", column: "required_labels", values: "label" },
    ofDevice: (d) => labelPairs(d.labels ?? {}),
    asked: (s) => `labels ${labelPairs(s.labels ?? {}).join(", ")}`,
    has: (d) =>
      Object.keys(d.labels ?? {}).length === 0 ? "no labels" : labelPairs(d.labels ?? {}).join(","),
  },
];

/** The longest component `versionKey` can order, and how many components: an OS version has three or four. */
const componentDigits = 6;
const maxComponents = 6;

/**
 * A version as digits that sort as versions compare: each numeric component zero-padded to six digits, trailing
 * zero components dropped (10.0 is 10). "9" → 000009 < "10" → 000010 < "10.1" → 000010000001. Null for what is
 * not dotted numbers (a preview's codename): such a device meets no os_version_min/max.
 */
export function versionKey(version: string): string | null {
  const components = version.trim().split(".");
  if (components.length > maxComponents) return null;
  if (!components.every((c) => /^\d+$/.test(c) && c.length <= componentDigits)) return null;
  const numbers = components.map(Number);
  while (numbers.length > 1 && numbers.at(-1) === 0) numbers.pop();
  return numbers.map((n) => String(n).padStart(componentDigits, "0")).join("");
}

/** Whether a plan may name this version in os_version_min/max (testplans validates with it). */
export function isComparableVersion(version: string): boolean {
  return versionKey(version) !== null;
}

/** Labels as one string each, KEY=VALUE, sorted: keys hold no "=" (agent.schemas.ts, testplans.schemas.ts). */
export function labelPairs(labels: Readonly<Record<string, string>>): string[] {
  return Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .sort();
}

/** The selectors of a plan's device entry (a stored plan's JSON), leaving out what is not one. */
export function selectorsOf(entry: Record<string, unknown> | null): DeviceSelectors {
  if (entry === null) return {};
  const selectors: DeviceSelectors = {};
  const integer = (v: unknown) => (typeof v === "number" && Number.isInteger(v) ? v : undefined);
  const text = (v: unknown) => (typeof v === "string" ? v : undefined);
  const set = <K extends keyof DeviceSelectors>(key: K, value: DeviceSelectors[K] | undefined) => {
    if (value !== undefined) selectors[key] = value;
  };
  set("api_level_min", integer(entry.api_level_min));
  set("api_level_max", integer(entry.api_level_max));
  set("os_version_min", text(entry.os_version_min));
  set("os_version_max", text(entry.os_version_max));
  if (Array.isArray(entry.models))
    set(
      "models",
      entry.models.filter((m) => typeof m === "string"),
    );
  set("abi", text(entry.abi));
  if (typeof entry.emulator === "boolean") set("emulator", entry.emulator);
  if (typeof entry.labels === "object" && entry.labels !== null && !Array.isArray(entry.labels)) {
    set(
      "labels",
      Object.fromEntries(
        Object.entries(entry.labels).filter((pair): pair is [string, string] => typeof pair[1] === "string"),
      ),
    );
  }
  return selectors;
}

/** The selectors an entry sets (an empty models list or labels object sets nothing). */
export function setSelectors(selectors: DeviceSelectors): SelectorRule[] {
  return selectorRules.filter((rule) => {
    const value = selectors[rule.name];
    if (value === undefined) return false;
    if (Array.isArray(value)) return value.length > 0;
    if (typeof value === "object") return Object.keys(value).length > 0;
    return true;
  });
}

/** The entry's side of a rule's comparison, as a device run stores it. */
function ofEntry(rule: SelectorRule, stored: StoredSelectors): Scalar | string[] {
  const c = rule.comparison;
  if ("values" in c) return c.values === "model" ? stored.models : stored.labels;
  return stored[c.column];
}

/** What a device run keeps of these selectors (enqueue-query.ts writes it). */
export function storedSelectors(selectors: DeviceSelectors): StoredSelectors {
  const key = (v: string | undefined) => (v === undefined ? null : versionKey(v));
  return {
    required_api_level_min: selectors.api_level_min ?? null,
    required_api_level_max: selectors.api_level_max ?? null,
    required_os_version_min: key(selectors.os_version_min),
    required_os_version_max: key(selectors.os_version_max),
    required_abi: selectors.abi ?? null,
    required_emulator: selectors.emulator === undefined ? null : selectors.emulator ? 1 : 0,
    models: [...new Set(selectors.models ?? [])].sort(),
    labels: labelPairs(selectors.labels ?? {}),
  };
}

/** Whether one rule admits the device: the JavaScript form of the comparison. */
export function admits(rule: SelectorRule, selectors: DeviceSelectors, device: AgentDevice): boolean {
  const wanted = ofEntry(rule, storedSelectors(selectors));
  const has = rule.ofDevice(device);
  switch (rule.comparison.kind) {
    // Both sides are numbers (API levels) or version keys (strings of digits): < and > order either alike.
    case "at_least":
      return wanted === null || (has !== null && (has as number) >= (wanted as number));
    case "at_most":
      return wanted === null || (has !== null && (has as number) <= (wanted as number));
    case "equals":
      return wanted === null || has === wanted;
    case "any_of": {
      const options = wanted as string[];
      return options.length === 0 || options.some((v) => (has as string[]).includes(v));
    }
    case "all_of":
      return (wanted as string[]).every((v) => (has as string[]).includes(v));
  }
}

/** Whether the device meets every selector of the entry. */
export function meetsSelectors(selectors: DeviceSelectors, device: AgentDevice): boolean {
  return selectorRules.every((rule) => admits(rule, selectors, device));
}

/**
 * The SQL form: a condition on device_runs that holds for the runs whose selectors this device meets. Each
 * comparison reads the run's column against the device's value; any_of and all_of count the run's values in
 * device_run_selector_values that the device has (its model, its labels).
 */
export function meetsSelectorsSql(device: AgentDevice): RawBuilder<unknown> {
  return sql.join(
    selectorRules.map((rule) => comparisonSql(rule.comparison, rule.ofDevice(device))),
    sql` and `,
  );
}

function comparisonSql(comparison: Comparison, has: Scalar | string[]): RawBuilder<unknown> {
  const column = sql.ref(comparison.column);
  if (comparison.kind === "any_of" || comparison.kind === "all_of") {
    const values = has as string[];
    if (values.length === 0) return sql`${column} = 0`;
    const counted = sql`(select count(*) from device_run_selector_values v where v.device_run_id = device_runs.id and v.selector = ${comparison.values} and v.value in (${sql.join(values)}))`;
    // A run that names none (the column 0, most runs) is decided without looking its values up.
    return comparison.kind === "any_of"
      ? sql`(${column} = 0 or ${counted} > 0)`
      : sql`(${column} = 0 or ${column} = ${counted})`;
  }
  if (has === null) return sql`${column} is null`;
  const op = comparison.kind === "at_least" ? sql`<=` : comparison.kind === "at_most" ? sql`>=` : sql`=`;
  // The run's bound against the device's value: "required_api_level_min <= 34" is "the device's 34 ≥ the min".
  return sql`(${column} is null or ${column} ${op} ${has})`;
}

/**
 * Which offered devices a claim may match: idle ones, and those of agents older than states (no state).
 * Booting, busy, resetting, drained and failed devices never get a run (API.md §13).
 */
export function isClaimable(device: { state?: DeviceState }): boolean {
  return device.state === undefined || device.state === "idle";
}

/** Whether a device counts as there for a run to wait for: anything but failed and drained (it will free up). */
export function isInService(device: { state?: DeviceState }): boolean {
  return device.state !== "failed" && device.state !== "drained";
}
