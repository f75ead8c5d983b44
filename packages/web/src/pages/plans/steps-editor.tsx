import { useEffect, useId, useRef, useState } from "react";
import { formControl } from "../../components/control-classes.ts";
import { FieldMessages } from "./field-messages.tsx";
import { FlowsInput, StepFieldInput } from "./step-field-input.tsx";
import {
  emptyStep,
  type FieldKind,
  fieldKey,
  fieldsOf,
  isFormDraft,
  parseStepJson,
  type StepDraft,
  type StepField,
  type StepType,
  stepTypeNames,
  stepTypes,
  toDraft,
} from "./step-fields.ts";

const smallButton = "rounded-md border border-line px-2 py-1 text-xs hover:bg-sunken disabled:opacity-40";
/** Kinds that need the width of the step (commands, flows, name=value lines). */
const wide = new Set<FieldKind>(["multiline", "texts", "pairs"]);

/** Groups of options most steps leave at their defaults: folded until opened, or until one is set or refused. */
const foldedGroups = new Set(["Which tests run", "Shards and retries", "Device options"]);
const hasValue = (value: string | string[] | undefined) =>
  Array.isArray(value) ? value.some((item) => item.trim() !== "") : Boolean(value?.trim());

/**
 * A folded group of a step's options (details/summary: a keyboard and screen reader control of its own) that
 * says how many are set. Opens by itself when the API refuses one of its fields, so the message is seen.
 */
function FoldedGroup({
  title,
  set,
  invalid,
  children,
}: {
  title: string;
  set: number;
  invalid: boolean;
  children: React.ReactNode;
}) {
  const [open, setOpen] = useState(set > 0);
  return (
    // Open at once (not after an effect) when refused: the form focuses the first refused input right away.
    <details
      open={open || invalid}
      onToggle={(event) => setOpen(event.currentTarget.open)}
      className="min-w-0 rounded-md border border-line"
    >
      <summary className="cursor-pointer px-3 py-2 text-xs font-semibold">
        {title} <span className="font-normal text-muted">{set === 0 ? "(defaults)" : `(${set} set)`}</span>
      </summary>
      <div className="px-3 pb-3">{children}</div>
    </details>
  );
}

/** Fields in the groups they show in, in the order they come: ungrouped ones (group "") first of their run. */
function grouped(fields: readonly StepField[]): Array<{ group: string; fields: StepField[] }> {
  const groups: Array<{ group: string; fields: StepField[] }> = [];
  for (const field of fields) {
    const group = field.group ?? "";
    const last = groups[groups.length - 1];
    if (last && last.group === group) last.fields.push(field);
    else groups.push({ group, fields: [field] });
  }
  return groups;
}

/**
 * The plan's steps, run in order: each with its type's fields as inputs, added by type, removed, and moved up or
 * down with buttons (keyboard and screen reader friendly, no dragging). A step the form cannot show exactly stays
 * JSON, with the reason. `errors` are the form's field messages (`steps.1.expect.min_sdk_at_most`, `steps.1`).
 */
export function StepsEditor({
  steps,
  onChange,
  errors,
}: {
  steps: StepDraft[];
  /** `reshaped`: steps were added, removed or moved, so messages about positions no longer hold. */
  onChange: (steps: StepDraft[], reshaped: boolean) => void;
  errors: Record<string, string[]>;
}) {
  const id = useId();
  const [newType, setNewType] = useState<StepType>("inspect");
  const [announcement, setAnnouncement] = useState("");
  const [moved, setMoved] = useState<{ key: string; direction: "up" | "down" }>();
  const [removedAt, setRemovedAt] = useState<{ index: number }>();
  const list = useRef<HTMLOListElement>(null);
  const newTypeSelect = useRef<HTMLSelectElement>(null);

  // A removed step takes its focused Remove button with it: focus the step that took its place, else the control
  // that adds one.
  useEffect(() => {
    if (!removedAt) return;
    const card = list.current?.children[removedAt.index];
    (card?.querySelector<HTMLButtonElement>("[data-remove]") ?? newTypeSelect.current)?.focus();
  }, [removedAt]);

  // After a move the step's button would lose focus (its node moves); put it back on the same button, or the
  // other one when the step reached an end.
  useEffect(() => {
    if (!moved) return;
    const card = list.current?.querySelector<HTMLElement>(`[data-step-key="${moved.key}"]`);
    const same = card?.querySelector<HTMLButtonElement>(`[data-move="${moved.direction}"]`);
    const other = card?.querySelector<HTMLButtonElement>(
      `[data-move="${moved.direction === "up" ? "down" : "up"}"]`,
    );
    (same && !same.disabled ? same : other)?.focus();
  }, [moved]);

  const set = (index: number, draft: StepDraft) =>
    onChange(
      steps.map((step, at) => (at === index ? draft : step)),
      false,
    );
  const move = (index: number, direction: "up" | "down") => {
    const to = direction === "up" ? index - 1 : index + 1;
    const step = steps[index];
    const other = steps[to];
    if (!step || !other) return;
    const next = [...steps];
    next[to] = step;
    next[index] = other;
    onChange(next, true);
    setMoved({ key: step.key, direction });
    setAnnouncement(`Step ${index + 1} moved ${direction} to position ${to + 1}.`);
  };
  const remove = (index: number) => {
    onChange(
      steps.filter((_, at) => at !== index),
      true,
    );
    setRemovedAt({ index });
    setAnnouncement(`Step ${index + 1} removed.`);
  };
  const add = () => {
    onChange([...steps, emptyStep(newType)], true);
    setAnnouncement(`Step ${steps.length + 1} (${newType}) added.`);
  };

  return (
    <div className="space-y-3">
      <FieldMessages id={`${id}-steps-error`} messages={errors.steps} />
      <p aria-live="polite" className="sr-only">
        {announcement}
      </p>
      <ol ref={list} className="space-y-3">
        {steps.map((step, index) => (
          <li key={step.key} data-step-key={step.key}>
            <StepCard
              step={step}
              index={index}
              count={steps.length}
              errors={errors}
              onChange={(draft) => set(index, draft)}
              onMove={(direction) => move(index, direction)}
              onRemove={() => remove(index)}
            />
          </li>
        ))}
      </ol>
      <div className="flex flex-wrap items-end gap-2">
        <div className="flex flex-col gap-1">
          <label htmlFor={`${id}-new-type`} className="text-xs font-medium">
            Type of the new step
          </label>
          <select
            id={`${id}-new-type`}
            ref={newTypeSelect}
            className={`${formControl} w-auto`}
            value={newType}
            aria-invalid={Boolean(errors.steps)}
            aria-describedby={`${id}-steps-error`}
            onChange={(event) => setNewType(event.target.value as StepType)}
          >
            {stepTypeNames.map((type) => (
              <option key={type} value={type}>
                {type}
              </option>
            ))}
          </select>
        </div>
        <button
          type="button"
          className="h-9 rounded-md border border-line px-3 text-sm hover:bg-sunken"
          onClick={add}
        >
          Add step
        </button>
      </div>
    </div>
  );
}

function StepCard({
  step,
  index,
  count,
  errors,
  onChange,
  onMove,
  onRemove,
}: {
  step: StepDraft;
  index: number;
  count: number;
  errors: Record<string, string[]>;
  onChange: (draft: StepDraft) => void;
  onMove: (direction: "up" | "down") => void;
  onRemove: () => void;
}) {
  const id = useId();
  const number = index + 1;
  const stepMessages = errors[`steps.${index}`];
  const messagesOf = (key: string) => errors[`steps.${index}.${key}`];
  return (
    <fieldset
      className="min-w-0 space-y-3 rounded-md border border-line p-3"
      aria-describedby={stepMessages ? `${id}-error` : undefined}
    >
      <legend className="sr-only">
        Step {number}: {step.type}
      </legend>
      <div className="flex flex-wrap items-center gap-2">
        <span className="text-sm font-semibold" aria-hidden="true">
          Step {number} · <span className="font-mono">{step.type}</span>
        </span>
        <div className="ml-auto flex gap-1">
          <button
            type="button"
            data-move="up"
            className={smallButton}
            disabled={index === 0}
            aria-label={`Move step ${number} up`}
            onClick={() => onMove("up")}
          >
            ↑ Up
          </button>
          <button
            type="button"
            data-move="down"
            className={smallButton}
            disabled={index === count - 1}
            aria-label={`Move step ${number} down`}
            onClick={() => onMove("down")}
          >
            ↓ Down
          </button>
          <button
            type="button"
            className={`${smallButton} text-red-700 dark:text-red-300`}
            data-remove
            aria-label={`Remove step ${number}`}
            onClick={onRemove}
          >
            Remove
          </button>
        </div>
      </div>
      {stepMessages && (
        // Focusable so a submit that the API refused for the step as a whole can take the person here.
        <p
          id={`${id}-error`}
          tabIndex={-1}
          data-invalid-message
          className="text-xs text-red-700 dark:text-red-300"
        >
          {stepMessages.join("; ")}
        </p>
      )}
      {isFormDraft(step) ? (
        <StepFields
          id={id}
          step={step}
          messagesOf={messagesOf}
          onChange={(key, value) => onChange({ ...step, values: { ...step.values, [key]: value } })}
        />
      ) : (
        <JsonStep id={id} step={step} messages={messagesOf("json")} onChange={onChange} />
      )}
    </fieldset>
  );
}

function StepFields({
  id,
  step,
  messagesOf,
  onChange,
}: {
  id: string;
  step: Extract<StepDraft, { values: unknown }>;
  messagesOf: (key: string) => string[] | undefined;
  onChange: (key: string, value: string | string[]) => void;
}) {
  const type = step.type;
  const input = (field: StepField) => {
    const key = fieldKey(field);
    const value = step.values[key] ?? "";
    const inputId = `${id}-${key.replaceAll(".", "-")}`;
    if (field.kind === "texts") {
      return (
        <div key={key} className="sm:col-span-2">
          <FlowsInput
            id={inputId}
            flows={Array.isArray(value) ? value : [value]}
            errors={(flow) => messagesOf(flow === "" ? key : `${key}.${flow}`)}
            onChange={(flows) => onChange(key, flows)}
          />
        </div>
      );
    }
    return (
      <div key={key} className={wide.has(field.kind) ? "sm:col-span-2" : undefined}>
        <StepFieldInput
          id={inputId}
          field={field}
          value={Array.isArray(value) ? value.join("\n") : value}
          messages={messagesOf(key)}
          onChange={(text) => onChange(key, text)}
        />
      </div>
    );
  };
  return (
    <>
      <p className="text-xs text-muted">{stepTypes[type].summary}</p>
      {grouped(fieldsOf(type)).map(({ group, fields }) =>
        group && foldedGroups.has(group) ? (
          <FoldedGroup
            key={group}
            title={group}
            set={fields.filter((field) => hasValue(step.values[fieldKey(field)])).length}
            invalid={fields.some((field) => Boolean(messagesOf(fieldKey(field))))}
          >
            <div className="grid grid-cols-1 gap-3 sm:grid-cols-2">{fields.map(input)}</div>
          </FoldedGroup>
        ) : group ? (
          <fieldset key={group} className="min-w-0 rounded-md border border-line p-3">
            <legend className="px-1 text-xs font-semibold">{group}</legend>
            <div className="grid grid-cols-1 gap-3 sm:grid-cols-2">{fields.map(input)}</div>
          </fieldset>
        ) : (
          <div key={fields.map(fieldKey).join()} className="grid grid-cols-1 gap-3 sm:grid-cols-2">
            {fields.map(input)}
          </div>
        ),
      )}
    </>
  );
}

/** A step the form cannot show exactly: its JSON, why, and a way back to the form once it can. */
function JsonStep({
  id,
  step,
  messages,
  onChange,
}: {
  id: string;
  step: Extract<StepDraft, { json: string }>;
  messages: string[] | undefined;
  onChange: (draft: StepDraft) => void;
}) {
  const [problem, setProblem] = useState<string>();
  const useForm = () => {
    const parsed = parseStepJson(step.json);
    if (!parsed.step) return setProblem(`The step ${parsed.error}`);
    const draft = toDraft(parsed.step);
    if (!isFormDraft(draft)) return setProblem(draft.reason);
    setProblem(undefined);
    onChange({ ...draft, key: step.key });
  };
  const shown = [...(problem ? [problem] : []), ...(messages ?? [])];
  return (
    <div className="flex flex-col gap-1">
      <label htmlFor={`${id}-json`} className="text-xs font-medium">
        Step as JSON
      </label>
      <p id={`${id}-json-reason`} className="text-xs text-muted">
        {step.reason}
      </p>
      <textarea
        id={`${id}-json`}
        value={step.json}
        rows={6}
        spellCheck={false}
        className={`${formControl} h-auto py-1.5 font-mono text-xs`}
        aria-invalid={shown.length > 0}
        aria-describedby={`${id}-json-reason ${id}-json-error`}
        onChange={(event) => onChange({ ...step, json: event.target.value })}
      />
      <FieldMessages id={`${id}-json-error`} messages={shown.length > 0 ? shown : undefined} />
      <button type="button" className={`${smallButton} self-start`} onClick={useForm}>
        Edit this step in the form
      </button>
    </div>
  );
}
