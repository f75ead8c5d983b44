import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { type FormEvent, useEffect, useId, useRef, useState } from "react";
import { appsQuery } from "../../api/catalog.ts";
import { createPlan, updatePlan } from "../../api/plans.ts";
import type { TestPlan } from "../../api/types.ts";
import { formControl } from "../../components/control-classes.ts";
import { type DeviceRow, DevicesEditor } from "./devices-editor.tsx";
import { emptyNameMessage, fieldErrors } from "./field-errors.ts";
import { FieldMessages } from "./field-messages.tsx";
import { fromDraft, isFormDraft, parseStepJson, type StepDraft, toDraft } from "./step-fields.ts";
import { StepsEditor } from "./steps-editor.tsx";

const control = formControl;
const exampleSteps = [{ type: "inspect", expect: { min_sdk_at_most: 24, debuggable: false } }];

/** Not JSON, or not a list: said at the steps field before anything is sent. */
function parseSteps(text: string): { steps?: TestPlan["steps"]; error?: string } {
  try {
    const steps: unknown = JSON.parse(text);
    if (!Array.isArray(steps)) return { error: 'must be a JSON list of steps: [ {"type": …}, … ]' };
    return { steps: steps as TestPlan["steps"] };
  } catch (error) {
    return { error: `are not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** The JSON textarea's steps, or why they cannot be sent (at the textarea). */
function stepsOfJson(text: string): { steps?: TestPlan["steps"]; errors: Record<string, string[]> } {
  const { steps, error } = parseSteps(text);
  return { steps, errors: error ? { steps: [`The steps ${error}`] } : {} };
}

/** The steps the form holds as the API takes them, or, per step, why its JSON cannot be sent. */
function stepsOfDrafts(drafts: readonly StepDraft[]): {
  steps?: TestPlan["steps"];
  errors: Record<string, string[]>;
} {
  const errors: Record<string, string[]> = {};
  const steps = drafts.map((draft, index) => {
    const step = fromDraft(draft);
    if (!step && !isFormDraft(draft)) {
      errors[`steps.${index}.json`] = [`The step ${parseStepJson(draft.json).error}`];
    }
    return step;
  });
  if (Object.keys(errors).length > 0) return { errors };
  return { steps: steps as TestPlan["steps"], errors };
}

/**
 * Creates a plan (no `plan`) or edits one. The steps are a form of each step type's fields by default, or one
 * JSON list (for steps copied from testbay.yaml). The API checks the plan; each of its messages shows at the
 * field it is about (the JSON Pointer of `errors[].path`), those no field holds at the top, and the first field
 * with a message takes the focus.
 */
export function PlanForm({ plan, app }: { plan?: TestPlan; app?: string }) {
  const navigate = useNavigate();
  const queries = useQueryClient();
  const apps = useQuery(appsQuery);
  const id = useId();
  const form = useRef<HTMLFormElement>(null);
  const [name, setName] = useState(plan?.name ?? "");
  const [chosenApp, setApp] = useState(plan?.package_name ?? app ?? "");
  const [devices, setDevices] = useState<DeviceRow[]>(plan?.devices ?? []);
  const [drafts, setDrafts] = useState<StepDraft[]>(() => (plan?.steps ?? exampleSteps).map(toDraft));
  const [asJson, setAsJson] = useState(false);
  const [stepsText, setStepsText] = useState("");
  const [timeout, setTimeoutSeconds] = useState(String(plan?.timeout_seconds ?? 1800));
  const [attempts, setAttempts] = useState(String(plan?.max_attempts ?? 1));
  /** Messages the form finds before sending: no name, steps that are not JSON. */
  const [localErrors, setLocalErrors] = useState<Record<string, string[]>>({});
  /** Bumped when a submit fails: the first field with a message then takes the focus. */
  const [failedSubmits, setFailedSubmits] = useState(0);
  const packageName = chosenApp || apps.data?.[0]?.package_name || "";

  const save = useMutation({
    mutationFn: async (steps: TestPlan["steps"]) => {
      const body = {
        name,
        devices,
        steps,
        timeout_seconds: Number(timeout),
        max_attempts: Number(attempts),
      };
      return plan ? updatePlan(plan.id, body) : createPlan({ ...body, package_name: packageName });
    },
    onSuccess: async (saved) => {
      queries.setQueryData(["plan", saved.id], saved);
      await queries.invalidateQueries({ queryKey: ["plans"] });
      await navigate({ to: "/plans/$planId", params: { planId: saved.id } });
    },
    onError: () => setFailedSubmits((count) => count + 1),
  });

  useEffect(() => {
    if (failedSubmits === 0) return;
    form.current?.querySelector<HTMLElement>('[aria-invalid="true"], [data-invalid-message]')?.focus();
  }, [failedSubmits]);

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const parsed = asJson ? stepsOfJson(stepsText) : stepsOfDrafts(drafts);
    // A plan needs a name: said before sending (the server would refuse it too, in Ajv's words).
    const found = name.trim() ? parsed.errors : { name: [emptyNameMessage], ...parsed.errors };
    setLocalErrors(found);
    if (parsed.steps && Object.keys(found).length === 0) {
      save.mutate(parsed.steps);
      return;
    }
    // The server's messages of the last try would be stale beside these: only the form's own show.
    save.reset();
    setFailedSubmits((count) => count + 1);
  };

  /** Steps to JSON and back; a list that does not read stays JSON, with the reason at the textarea. */
  const toggleJson = () => {
    save.reset();
    if (asJson) {
      const parsed = stepsOfJson(stepsText);
      setLocalErrors(parsed.errors);
      if (!parsed.steps) return;
      setDrafts(parsed.steps.map(toDraft));
      setAsJson(false);
      return;
    }
    const current = stepsOfDrafts(drafts);
    setLocalErrors(current.errors);
    if (!current.steps) return;
    setStepsText(JSON.stringify(current.steps, null, 2));
    setAsJson(true);
  };

  const apiErrors = fieldErrors(save.error, asJson ? undefined : drafts);
  const errors = { ...apiErrors, fields: { ...apiErrors.fields, ...localErrors } };
  const stepsMessages = errors.fields.steps;
  const jsonSteps = drafts.filter((draft) => !isFormDraft(draft)).length;
  const invalid = (field: string) => Boolean(errors.fields[field]);

  return (
    <form
      ref={form}
      onSubmit={submit}
      noValidate
      aria-label={plan ? "Edit the test plan" : "New test plan"}
      className="max-w-3xl space-y-5"
    >
      {errors.general.length > 0 && (
        <div
          role="alert"
          className="rounded-md border border-red-300 bg-red-50 p-3 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100"
        >
          <p>The plan was not saved.</p>
          <ul className="mt-1 list-disc pl-5">
            {errors.general.map((message) => (
              <li key={message}>{message}</li>
            ))}
          </ul>
        </div>
      )}
      {errors.general.length === 0 && Object.keys(errors.fields).length > 0 && (
        <p role="alert" className="text-sm text-red-700 dark:text-red-300">
          The plan was not saved: see the messages at the fields below.
        </p>
      )}
      <div className="flex flex-col gap-1">
        <label htmlFor={`${id}-name`} className="text-sm font-medium">
          Name
        </label>
        <input
          id={`${id}-name`}
          className={control}
          value={name}
          required
          aria-invalid={invalid("name")}
          aria-describedby={`${id}-name-error`}
          onChange={(event) => setName(event.target.value)}
        />
        <FieldMessages id={`${id}-name-error`} messages={errors.fields.name} />
      </div>
      <div className="flex flex-col gap-1">
        <label htmlFor={`${id}-app`} className="text-sm font-medium">
          App
        </label>
        <select
          id={`${id}-app`}
          className={control}
          value={packageName}
          disabled={plan !== undefined}
          aria-invalid={invalid("package_name")}
          aria-describedby={`${id}-app-error`}
          onChange={(event) => setApp(event.target.value)}
        >
          {plan && <option value={plan.package_name}>{plan.package_name}</option>}
          {!plan &&
            apps.data?.map((item) => (
              <option key={item.package_name} value={item.package_name}>
                {item.package_name} ({item.platform})
              </option>
            ))}
        </select>
        {plan && (
          <p className="text-xs text-muted">A plan stays with its app: create a new plan for another.</p>
        )}
        <FieldMessages id={`${id}-app-error`} messages={errors.fields.package_name} />
      </div>
      <DevicesEditor devices={devices} onChange={setDevices} errors={errors.fields} />
      <fieldset className="min-w-0 space-y-2">
        {/* A legend must be the fieldset's first child to name it; the visible title sits beside the toggle. */}
        <legend className="sr-only">Steps</legend>
        <div className="flex flex-wrap items-center gap-2">
          <span className="text-sm font-medium" aria-hidden="true">
            Steps (run in order)
          </span>
          <button
            type="button"
            className="ml-auto rounded-md border border-line px-3 py-1 text-xs hover:bg-sunken"
            onClick={toggleJson}
          >
            {asJson ? "Edit in the form" : "Edit as JSON"}
          </button>
        </div>
        {asJson ? (
          <div className="flex flex-col gap-1">
            <label htmlFor={`${id}-steps`} className="text-xs font-medium">
              Steps as JSON
            </label>
            <p id={`${id}-steps-help`} className="text-xs text-muted">
              A JSON list of steps, as in testbay.yaml: each has a type (inspect, instrumentation, xcuitest,
              maestro or shell) and that type's fields (see the API reference, test plans).
            </p>
            <textarea
              id={`${id}-steps`}
              className="min-h-48 w-full rounded-md border border-line bg-surface p-2 font-mono text-xs aria-invalid:border-red-600 dark:aria-invalid:border-red-400"
              value={stepsText}
              spellCheck={false}
              aria-invalid={Boolean(stepsMessages)}
              aria-describedby={`${id}-steps-help ${id}-steps-error`}
              onChange={(event) => setStepsText(event.target.value)}
            />
            <FieldMessages id={`${id}-steps-error`} messages={stepsMessages} />
          </div>
        ) : (
          <>
            {jsonSteps > 0 && (
              <p className="text-xs text-muted">
                {jsonSteps === 1 ? "One step is" : `${jsonSteps} steps are`} shown as JSON: the form cannot
                show all of {jsonSteps === 1 ? "its" : "their"} fields, and keeps them as they are.
              </p>
            )}
            <StepsEditor
              steps={drafts}
              errors={errors.fields}
              onChange={(next, reshaped) => {
                setDrafts(next);
                // Messages name steps by position: after a move or removal they would point at the wrong one.
                if (reshaped) {
                  save.reset();
                  setLocalErrors({});
                }
              }}
            />
          </>
        )}
      </fieldset>
      <div className="grid grid-cols-1 gap-4 sm:grid-cols-2">
        <div className="flex flex-col gap-1">
          <label htmlFor={`${id}-timeout`} className="text-sm font-medium">
            Timeout (seconds)
          </label>
          <input
            id={`${id}-timeout`}
            type="number"
            inputMode="numeric"
            className={control}
            value={timeout}
            aria-invalid={invalid("timeout_seconds")}
            aria-describedby={`${id}-timeout-help ${id}-timeout-error`}
            onChange={(event) => setTimeoutSeconds(event.target.value)}
          />
          <p id={`${id}-timeout-help`} className="text-xs text-muted">
            30 s to 24 h; a device run still going then is stopped.
          </p>
          <FieldMessages id={`${id}-timeout-error`} messages={errors.fields.timeout_seconds} />
        </div>
        <div className="flex flex-col gap-1">
          <label htmlFor={`${id}-attempts`} className="text-sm font-medium">
            Max attempts
          </label>
          <select
            id={`${id}-attempts`}
            className={control}
            value={attempts}
            aria-invalid={invalid("max_attempts")}
            aria-describedby={`${id}-attempts-error`}
            onChange={(event) => setAttempts(event.target.value)}
          >
            <option value="1">1</option>
            <option value="2">2</option>
            <option value="3">3</option>
          </select>
          <FieldMessages id={`${id}-attempts-error`} messages={errors.fields.max_attempts} />
        </div>
      </div>
      <div className="flex gap-3">
        <button
          type="submit"
          disabled={save.isPending || !packageName}
          className="h-9 rounded-md bg-accent px-4 text-sm font-medium text-accent-ink hover:opacity-90 disabled:opacity-50"
        >
          {save.isPending ? "Saving…" : plan ? "Save changes" : "Create plan"}
        </button>
        <button
          type="button"
          className="h-9 rounded-md border border-line px-4 text-sm hover:bg-sunken"
          onClick={() =>
            plan
              ? navigate({ to: "/plans/$planId", params: { planId: plan.id } })
              : navigate({ to: "/plans", search: {} })
          }
        >
          Cancel
        </button>
      </div>
    </form>
  );
}
