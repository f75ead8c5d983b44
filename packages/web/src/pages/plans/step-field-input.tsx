import { formControl } from "../../components/control-classes.ts";
import { FieldMessages } from "./field-messages.tsx";
import type { StepField } from "./step-fields.ts";

const label = "text-xs font-medium";
const help = "text-xs text-muted";
const textarea = `${formControl} h-auto py-1.5 font-mono text-xs`;

/**
 * One field of a step as its input: a text box, a number, a list one a line, a yes/no/default choice. The API's
 * messages for it show under it, named by its aria-describedby, and outline it red (aria-invalid).
 */
export function StepFieldInput({
  id,
  field,
  value,
  messages,
  onChange,
}: {
  id: string;
  field: StepField;
  value: string;
  messages: string[] | undefined;
  onChange: (value: string) => void;
}) {
  const describedBy = [field.help ? `${id}-help` : "", `${id}-error`].filter(Boolean).join(" ");
  const common = {
    id,
    value,
    "aria-invalid": Boolean(messages?.length),
    "aria-describedby": describedBy,
  };
  let input: React.ReactNode;
  switch (field.kind) {
    case "boolean":
    case "choice": {
      const options = field.kind === "boolean" ? ["yes", "no"] : (field.options ?? []);
      input = (
        <select {...common} className={formControl} onChange={(event) => onChange(event.target.value)}>
          <option value="">Default ({field.default})</option>
          {options.map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
        </select>
      );
      break;
    }
    case "multiline":
    case "lines":
    case "pairs":
      input = (
        <textarea
          {...common}
          rows={field.kind === "multiline" ? 4 : 2}
          placeholder={field.kind === "pairs" ? "name=value" : undefined}
          spellCheck={false}
          className={textarea}
          onChange={(event) => onChange(event.target.value)}
        />
      );
      break;
    default:
      input = (
        <input
          {...common}
          className={formControl}
          inputMode={field.kind === "integer" ? "numeric" : field.kind === "number" ? "decimal" : undefined}
          spellCheck={false}
          onChange={(event) => onChange(event.target.value)}
        />
      );
  }
  return (
    <div className="flex min-w-0 flex-col gap-1">
      <label htmlFor={id} className={label}>
        {field.label}
      </label>
      {input}
      {field.help && (
        <p id={`${id}-help`} className={help}>
          {field.help}
        </p>
      )}
      <FieldMessages id={`${id}-error`} messages={messages} />
    </div>
  );
}

/** Maestro's flows: each YAML text in its own textarea, added and removed one by one. */
export function FlowsInput({
  id,
  flows,
  errors,
  onChange,
}: {
  id: string;
  flows: string[];
  /** Messages by flow index, and under "" those about the list as a whole. */
  errors: (index: number | "") => string[] | undefined;
  onChange: (flows: string[]) => void;
}) {
  const listMessages = errors("");
  return (
    <div className="space-y-2">
      <FieldMessages id={`${id}-error`} messages={listMessages} />
      {flows.map((flow, index) => {
        const flowId = `${id}-${index}`;
        const messages = errors(index) ?? (index === 0 ? listMessages : undefined);
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: a flow is its position in the step
          <div key={index} className="flex flex-col gap-1">
            <div className="flex items-end justify-between gap-2">
              <label htmlFor={flowId} className={label}>
                Flow {index + 1} (YAML)
              </label>
              {flows.length > 1 && (
                <button
                  type="button"
                  className="rounded-md px-2 py-0.5 text-xs text-muted hover:bg-sunken"
                  onClick={() => onChange(flows.filter((_, at) => at !== index))}
                >
                  Remove flow {index + 1}
                </button>
              )}
            </div>
            <textarea
              id={flowId}
              value={flow}
              rows={5}
              spellCheck={false}
              className={textarea}
              placeholder={"appId: com.example.app\n---\n- launchApp"}
              aria-invalid={Boolean(messages?.length)}
              aria-describedby={index === 0 ? `${id}-error ${flowId}-error` : `${flowId}-error`}
              onChange={(event) =>
                onChange(flows.map((text, at) => (at === index ? event.target.value : text)))
              }
            />
            <FieldMessages id={`${flowId}-error`} messages={errors(index)} />
          </div>
        );
      })}
      <button
        type="button"
        className="rounded-md border border-line px-3 py-1 text-xs hover:bg-sunken"
        onClick={() => onChange([...flows, ""])}
      >
        Add a flow
      </button>
    </div>
  );
}
