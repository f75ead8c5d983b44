// The plan's steps as the form edits them: each step type's fields (API.md §5, the server's testplans.schemas.ts)
// as inputs that hold text, and the conversion between a step of the API and those inputs. A step the form cannot
// show exactly (a field it does not know, a value of a shape it does not edit) stays JSON, so nothing is dropped.

/** A step as the API sends and takes it. */
export type StepJson = Record<string, unknown>;

export type FieldKind =
  /** One line of text. */
  | "text"
  /** Several lines of text (a shell command). */
  | "multiline"
  | "integer"
  | "number"
  /** A list of strings, one a line. */
  | "lines"
  /** A map of string to string, one `name=value` a line. */
  | "pairs"
  /** true, false or left out (the default). */
  | "boolean"
  /** One of `options`, or left out (the default). */
  | "choice"
  /** A list of texts, each its own textarea (Maestro flows). */
  | "texts";

export interface StepField {
  /** Where the value sits in the step: ["expect", "min_sdk_at_most"]. */
  path: readonly string[];
  label: string;
  kind: FieldKind;
  help?: string;
  /** What the API does when the field is left out, for booleans and choices ("yes", "on_failure"). */
  default?: string;
  options?: readonly string[];
  /** The group of fields it is shown in ("Expect", "Filter", "Device options"). */
  group?: string;
}

const name: StepField = {
  path: ["name"],
  label: "Step title",
  kind: "text",
  help: "Optional: the step's name in results.",
};
const timeout: StepField = {
  path: ["timeout_seconds"],
  label: "Step timeout (seconds)",
  kind: "integer",
  help: "Optional; 1 s to 24 h.",
};
const deviceOptions: StepField[] = [
  {
    path: ["shards"],
    label: "Shards",
    kind: "integer",
    help: "1–50: the tests split over that many devices matching each device entry. Default 1.",
    group: "Shards and retries",
  },
  {
    path: ["sharding"],
    label: "Split by",
    kind: "choice",
    options: ["duration", "uniform"],
    default: "duration",
    help: "duration balances by each test's recent time; uniform by count.",
    group: "Shards and retries",
  },
  {
    path: ["retry_failed_tests"],
    label: "Retry failed tests",
    kind: "integer",
    help: "0–5: a failed test reruns alone up to that many times; passing then makes it flaky. Default 0.",
    group: "Shards and retries",
  },
  {
    path: ["record_video"],
    label: "Record video",
    kind: "choice",
    options: ["never", "on_failure", "always"],
    default: "on_failure",
    group: "Device options",
  },
  { path: ["logcat"], label: "Capture logcat", kind: "boolean", default: "yes", group: "Device options" },
  {
    path: ["screenshot_on_failure"],
    label: "Screenshot on failure",
    kind: "boolean",
    default: "yes",
    group: "Device options",
  },
  {
    path: ["clear_package_data"],
    label: "Clear app data first",
    kind: "boolean",
    default: "no",
    help: "pm clear before the tests run.",
    group: "Device options",
  },
];
/** The same options on iOS, said as they happen there: the device log, and uninstalling rather than pm clear. */
const iosDeviceOptions: StepField[] = deviceOptions.map((field) => {
  if (field.path[0] === "logcat") return { ...field, label: "Capture the device log" };
  if (field.path[0] === "clear_package_data") {
    return { ...field, help: "Uninstall the app (a shut-down simulator: erase it) before the tests run." };
  }
  return field;
});
const testIdentifiers = (key: string, label: string, help: string): StepField => ({
  path: [key],
  label,
  kind: "lines",
  help,
  group: "Which tests run",
});
const filterNames = (key: string, label: string, help: string): StepField => ({
  path: ["filter", key],
  label,
  kind: "lines",
  help,
  group: "Which tests run",
});

/** Each step type the API takes, with its fields in the order the form shows them. */
export const stepTypes = {
  inspect: {
    summary: "Checks the uploaded binary's metadata; needs no device.",
    fields: [
      name,
      { path: ["expect", "max_size_mb"], label: "Max size (MB)", kind: "number", group: "Expect" },
      { path: ["expect", "min_sdk_at_most"], label: "Min SDK at most", kind: "integer", group: "Expect" },
      {
        path: ["expect", "target_sdk_at_least"],
        label: "Target SDK at least",
        kind: "integer",
        group: "Expect",
      },
      {
        path: ["expect", "abis_include"],
        label: "ABIs included",
        kind: "lines",
        help: "One a line, e.g. arm64-v8a.",
        group: "Expect",
      },
      {
        path: ["expect", "permissions_exclude"],
        label: "Permissions not requested",
        kind: "lines",
        help: "One a line, e.g. android.permission.READ_SMS.",
        group: "Expect",
      },
      {
        path: ["expect", "debuggable"],
        label: "Debuggable",
        kind: "boolean",
        default: "not checked",
        group: "Expect",
      },
    ],
  },
  instrumentation: {
    summary: "Android instrumentation tests on a device, with the version's test package.",
    fields: [
      name,
      {
        path: ["test_package"],
        label: "Test package",
        kind: "text",
        help: "Default: the version's test package (given, it must be that package).",
      },
      {
        path: ["runner"],
        label: "Runner",
        kind: "text",
        help: "Default: the test package's <instrumentation android:name>.",
      },
      filterNames("classes", "Classes", "-e class: one a line, a class or Class#method."),
      filterNames("packages", "Packages", "-e package: one a line."),
      filterNames("annotations", "Annotations", "-e annotation: one a line, fully qualified."),
      filterNames("not_annotations", "Not annotations", "-e notAnnotation: one a line."),
      {
        path: ["filter", "size"],
        label: "Size",
        kind: "choice",
        options: ["small", "medium", "large"],
        default: "any",
        group: "Which tests run",
      },
      {
        path: ["args"],
        label: "Instrumentation arguments",
        kind: "pairs",
        help: "-e name value: one name=value a line.",
      },
      ...deviceOptions,
      timeout,
    ],
  },
  xcuitest: {
    summary:
      "iOS XCUITest tests on a simulator or device of a macOS agent, with the version's test package (a zip of xcodebuild build-for-testing output).",
    fields: [
      name,
      testIdentifiers(
        "only_testing",
        "Only testing",
        "-only-testing: one a line, Target, Target/Class or Target/Class/method. Default: every test.",
      ),
      testIdentifiers("skip_testing", "Skip testing", "-skip-testing: one a line, in the same form."),
      ...iosDeviceOptions,
      timeout,
    ],
  },
  maestro: {
    summary: "Maestro flows (YAML) run on a device after the app is installed; APP_ID is the app's package.",
    fields: [name, { path: ["flows"], label: "Flow", kind: "texts" }, ...deviceOptions, timeout],
  },
  shell: {
    summary: "A shell command on an agent that allows shell steps.",
    fields: [
      name,
      { path: ["run"], label: "Command", kind: "multiline" },
      {
        path: ["junit"],
        label: "JUnit XML files",
        kind: "text",
        help: "Optional glob of JUnit XML files to read results from, e.g. build/test-results/**/*.xml.",
      },
      timeout,
    ],
  },
} satisfies Record<string, { summary: string; fields: StepField[] }>;

export type StepType = keyof typeof stepTypes;
export const stepTypeNames = Object.keys(stepTypes) as StepType[];

const isStepType = (type: unknown): type is StepType => typeof type === "string" && type in stepTypes;
export const fieldsOf = (type: StepType): readonly StepField[] => stepTypes[type].fields;
export const fieldKey = (field: StepField) => field.path.join(".");

/** A step in the form: its type's inputs (texts, lists of texts for flows), or its JSON with why. */
export type StepDraft =
  | { key: string; type: StepType; values: Record<string, string | string[]> }
  | { key: string; type: string; json: string; reason: string };

export const isFormDraft = (draft: StepDraft): draft is Extract<StepDraft, { values: unknown }> =>
  "values" in draft;

let keys = 0;
/** A key that stays with a step while it moves (React's list key, and where focus goes back after a move). */
export const newStepKey = () => `step-${++keys}`;

/** A new, empty step of a type; Maestro starts with one empty flow to fill in. */
export function emptyStep(type: StepType): StepDraft {
  const values: Record<string, string | string[]> = {};
  for (const field of fieldsOf(type)) values[fieldKey(field)] = field.kind === "texts" ? [""] : "";
  return { key: newStepKey(), type, values };
}

const booleanText = (value: boolean) => (value ? "yes" : "no");

/** A value of the API as the input's text; undefined when the input cannot hold it as it is. */
function toText(field: StepField, value: unknown): string | string[] | undefined {
  if (value === undefined) return field.kind === "texts" ? [""] : "";
  switch (field.kind) {
    case "text":
    case "multiline":
      return typeof value === "string" ? value : undefined;
    case "integer":
    case "number":
      return typeof value === "number" ? String(value) : undefined;
    case "boolean":
      return typeof value === "boolean" ? booleanText(value) : undefined;
    case "choice":
      return typeof value === "string" && field.options?.includes(value) ? value : undefined;
    case "lines":
      return Array.isArray(value) && value.every((item) => typeof item === "string")
        ? value.join("\n")
        : undefined;
    case "texts":
      return Array.isArray(value) && value.every((item) => typeof item === "string") ? [...value] : undefined;
    case "pairs": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
      const entries = Object.entries(value);
      if (!entries.every(([, text]) => typeof text === "string")) return undefined;
      return entries.map(([key, text]) => `${key}=${text}`).join("\n");
    }
  }
}

/**
 * The input's text as the API's value; undefined leaves the field out. A number that does not read as one is
 * sent as typed, so the API's message about it shows at its field.
 */
function fromText(field: StepField, text: string | string[]): unknown {
  if (Array.isArray(text)) {
    const items = text.filter((item) => item.trim() !== "");
    return items.length > 0 ? items : undefined;
  }
  const trimmed = text.trim();
  if (trimmed === "") return undefined;
  switch (field.kind) {
    case "text":
      return trimmed;
    case "multiline":
      return text;
    case "integer":
    case "number":
      return /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(trimmed) ? Number(trimmed) : trimmed;
    case "boolean":
      return trimmed === "yes";
    case "choice":
      return trimmed;
    case "lines": {
      const lines = text
        .split("\n")
        .map((line) => line.trim())
        .filter(Boolean);
      return lines.length > 0 ? lines : undefined;
    }
    case "pairs": {
      const pairs: Record<string, string> = {};
      for (const line of text.split("\n")) {
        if (line.trim() === "") continue;
        const at = line.indexOf("=");
        if (at < 0) pairs[line.trim()] = "";
        else pairs[line.slice(0, at).trim()] = line.slice(at + 1);
      }
      return pairs;
    }
    case "texts":
      return undefined;
  }
}

/** A copy with keys sorted at every level, to compare two steps regardless of their members' order. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
  );
}
const sameStep = (a: unknown, b: unknown) => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));

/** The members of a step (and of its objects the form opens, like expect and filter) the form has no input for. */
function unknownMembers(type: StepType, step: StepJson): string[] {
  const known = fieldsOf(type).map((field) => field.path);
  const unknown: string[] = [];
  const walk = (value: unknown, at: string[]) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return;
    for (const key of Object.keys(value)) {
      const path = [...at, key];
      if (at.length === 0 && key === "type") continue;
      const exact = known.some((field) => field.join(".") === path.join("."));
      const parent = known.some(
        (field) => field.length > path.length && field.join(".").startsWith(`${path.join(".")}.`),
      );
      if (exact) continue;
      if (parent) walk((value as Record<string, unknown>)[key], path);
      else unknown.push(path.join("."));
    }
  };
  walk(step, []);
  return unknown;
}

/** A step as JSON in the form, with the reason the form does not show its fields. */
const jsonDraft = (step: unknown, type: string, reason: string): StepDraft => ({
  key: newStepKey(),
  type,
  json: JSON.stringify(step, null, 2),
  reason,
});

/**
 * A step of the API as the form shows it. Kept as JSON (and said why) when the form would lose or change any of
 * it: an unknown type, a field the form has no input for, or a value of a shape its input cannot hold.
 */
export function toDraft(step: unknown): StepDraft {
  if (typeof step !== "object" || step === null || Array.isArray(step)) {
    return jsonDraft(step, "?", "This step is not a JSON object: edit it as JSON.");
  }
  const json = step as StepJson;
  const type = json.type;
  if (!isStepType(type)) {
    return jsonDraft(
      step,
      typeof type === "string" ? type : "?",
      `The form has no fields for steps of type ${JSON.stringify(type ?? null)}: edit it as JSON.`,
    );
  }
  const unknown = unknownMembers(type, json);
  if (unknown.length > 0) {
    return jsonDraft(
      step,
      type,
      `This step has fields the form does not edit (${unknown.join(", ")}): edit it as JSON.`,
    );
  }
  const values: Record<string, string | string[]> = {};
  for (const field of fieldsOf(type)) {
    let value: unknown = json;
    for (const key of field.path) value = (value as Record<string, unknown> | undefined)?.[key];
    const text = toText(field, value);
    if (text === undefined) {
      return jsonDraft(
        step,
        type,
        `The form cannot show this step's ${fieldKey(field)} as it is: edit it as JSON.`,
      );
    }
    values[fieldKey(field)] = text;
  }
  const draft: StepDraft = { key: newStepKey(), type, values };
  // The last guard: whatever the form would send back must be the step itself.
  if (!sameStep(fromDraft(draft), json)) {
    return jsonDraft(step, type, "The form cannot show this step exactly as it is: edit it as JSON.");
  }
  return draft;
}

/** What a step's JSON textarea holds, or why it cannot be sent. */
export function parseStepJson(text: string): { step?: StepJson; error?: string } {
  try {
    const step: unknown = JSON.parse(text);
    if (typeof step !== "object" || step === null || Array.isArray(step)) {
      return { error: 'must be a JSON object: {"type": …, …}' };
    }
    return { step: step as StepJson };
  } catch (error) {
    return { error: `is not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/**
 * The step the form sends: empty inputs left out. An inspect step always sends `expect`, the one thing it is
 * about, so the API can say it needs at least one check. A JSON step is sent as parsed (undefined: not JSON).
 */
export function fromDraft(draft: StepDraft): StepJson | undefined {
  if (!isFormDraft(draft)) return parseStepJson(draft.json).step;
  const step: StepJson = { type: draft.type };
  if (draft.type === "inspect") step.expect = {};
  for (const field of fieldsOf(draft.type)) {
    const value = fromText(field, draft.values[fieldKey(field)] ?? "");
    if (value === undefined) continue;
    let into = step;
    for (const key of field.path.slice(0, -1)) {
      into[key] ??= {};
      into = into[key] as StepJson;
    }
    into[field.path[field.path.length - 1] as string] = value;
  }
  return step;
}

/**
 * Where the API's message about a step shows, given the path inside that step (`["expect", "min_sdk_at_most"]`):
 * the input holding it (`expect.min_sdk_at_most`; a flow by its index, `flows.1`), or the step as a whole
 * (`""`) with the rest of the path as a prefix. A JSON step takes every message about it at its textarea.
 */
export function stepFieldOf(
  draft: StepDraft | undefined,
  inside: readonly string[],
): { field: string; prefix?: string } {
  const rest = (from: number) => (inside.length > from ? inside.slice(from).join(" › ") : undefined);
  if (!draft || !isFormDraft(draft)) return { field: "", prefix: rest(0) };
  let best: StepField | undefined;
  for (const field of fieldsOf(draft.type)) {
    const matches = field.path.every((key, at) => inside[at] === key);
    if (matches && field.path.length > (best?.path.length ?? 0)) best = field;
  }
  if (!best) return { field: "", prefix: rest(0) };
  const depth = best.path.length;
  const index = inside[depth];
  if (best.kind === "texts" && index !== undefined && /^\d+$/.test(index)) {
    return { field: `${fieldKey(best)}.${index}`, prefix: rest(depth + 1) };
  }
  if (best.kind === "lines" && index !== undefined && /^\d+$/.test(index)) {
    return { field: fieldKey(best), prefix: `entry ${Number(index) + 1}` };
  }
  return { field: fieldKey(best), prefix: rest(depth) };
}
