import { useMutation } from "@tanstack/react-query";
import {
  type FormEvent,
  type KeyboardEvent,
  type ReactNode,
  useEffect,
  useId,
  useRef,
  useState,
} from "react";
import { ApiProblem } from "../../api/problem.ts";
import {
  type CreatedWebhook,
  createWebhook,
  updateWebhook,
  type Webhook,
  type WebhookChanges,
  type WebhookFormat,
  webhookEvents,
} from "../../api/webhooks.ts";
import { ChoiceSelect } from "../../components/choice-select.tsx";
import { formControl } from "../../components/control-classes.ts";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { primaryButton, quietButton } from "./settings-classes.ts";
import { problemField, type WebhookField, webhookChanges } from "./webhooks-format.ts";

const webhookFormats = ["standard", "slack"] as const satisfies readonly WebhookFormat[];
const formatNames: Record<WebhookFormat, string> = {
  standard: "Standard Webhooks (signed JSON)",
  slack: "Slack incoming webhook",
};

type WebhookFormProps =
  /** Adding one: an empty form, the format to choose. */
  | { webhook?: undefined; onCreated: (webhook: CreatedWebhook) => unknown }
  /** Editing one in place: its URL, events and description; `onDone` gets it as saved, or nothing if unchanged. */
  | { webhook: Webhook; onDone: (saved: Webhook | undefined) => unknown; onCancel: () => void };

/**
 * Adding a webhook (its URL, the events it gets, with run finished checked as most teams want that one, its format
 * and what it is for) or editing one (the same, less the format, which PATCH cannot change). What the API refuses
 * (a private address, no event) shows under the field it is about, with the API's fix, and that field takes the
 * focus. Editing takes the focus to the URL on opening; Escape cancels.
 */
export function WebhookForm(props: WebhookFormProps) {
  const editing = props.webhook;
  const ids = {
    url: useId(),
    format: useId(),
    description: useId(),
    problem: useId(),
  };
  const urlInput = useRef<HTMLInputElement>(null);
  const descriptionInput = useRef<HTMLInputElement>(null);
  const eventsSet = useRef<HTMLFieldSetElement>(null);
  const [url, setUrl] = useState(editing?.url ?? "");
  const [events, setEvents] = useState<ReadonlySet<string>>(
    new Set(editing?.events ?? ["execution.finished"]),
  );
  const [format, setFormat] = useState<WebhookFormat>(editing?.format ?? "standard");
  const [description, setDescription] = useState(editing?.description ?? "");
  /** Bumped when the API refuses: the field it is about then takes the focus. */
  const [refusals, setRefusals] = useState(0);
  const refused = () => setRefusals((count) => count + 1);

  // gcTime 0: the answer carries the secret, which must not outlive the panel that shows it.
  const create = useMutation({
    mutationFn: createWebhook,
    gcTime: 0,
    onSuccess: (webhook) => {
      setUrl("");
      setDescription("");
      if (!props.webhook) return props.onCreated(webhook);
    },
    onError: refused,
  });
  const save = useMutation({
    mutationFn: ({ id, changes }: { id: string; changes: WebhookChanges }) => updateWebhook(id, changes),
    onSuccess: (saved) => {
      if (props.webhook) return props.onDone(saved);
    },
    onError: refused,
  });
  const sending = editing ? save : create;
  const error = sending.error;
  const field = problemField(error instanceof ApiProblem ? error.problem.errors : undefined);

  // On opening only (the webhook object itself changes with every refresh of the list).
  const isEdit = editing !== undefined;
  useEffect(() => {
    if (isEdit) urlInput.current?.focus();
  }, [isEdit]);
  useEffect(() => {
    if (refusals === 0) return;
    if (field === "url") urlInput.current?.focus();
    else if (field === "description") descriptionInput.current?.focus();
    else if (field === "events") eventsSet.current?.querySelector("input")?.focus();
  }, [refusals, field]);

  // In the order the API lists them, whatever order they were ticked in.
  const ticked = () => webhookEvents.map((e) => e.name).filter((name) => events.has(name));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!props.webhook) {
      create.mutate({
        url: url.trim(),
        events: ticked(),
        format,
        ...(description.trim() ? { description: description.trim() } : {}),
      });
      return;
    }
    const changes = webhookChanges(props.webhook, { url, events: ticked(), description });
    if (Object.keys(changes).length === 0) props.onDone(undefined);
    else save.mutate({ id: props.webhook.id, changes });
  };
  const tick = (name: string, checked: boolean) =>
    setEvents((current) => {
      const next = new Set(current);
      if (checked) next.add(name);
      else next.delete(name);
      return next;
    });
  const cancelOnEscape = (event: KeyboardEvent) => {
    if (props.webhook && event.key === "Escape") {
      event.preventDefault();
      props.onCancel();
    }
  };
  /** The refusal, under the field it is about (and named by that field's aria-describedby). */
  const problemAt = (at: WebhookField): ReactNode =>
    error && field === at ? (
      <div id={ids.problem}>
        <ProblemMessage error={error} />
      </div>
    ) : null;
  const describedBy = (at: WebhookField, ...others: string[]) =>
    [...others, error && field === at ? ids.problem : undefined].filter(Boolean).join(" ") || undefined;

  return (
    <form
      onSubmit={submit}
      onKeyDown={cancelOnEscape}
      noValidate
      aria-label={editing ? `Edit the webhook to ${editing.url}` : "Add a webhook"}
      // Editing, it takes the place of the webhook's summary inside the webhook's own card: no second frame.
      className={editing ? "space-y-3" : "space-y-3 rounded-lg border border-line bg-surface p-3"}
    >
      {editing && <p className="text-sm font-medium">Edit webhook</p>}
      <div className="flex flex-wrap items-start gap-3">
        <div className="flex w-full max-w-md flex-col gap-1">
          <label htmlFor={ids.url} className="text-xs text-muted">
            URL
          </label>
          <input
            ref={urlInput}
            id={ids.url}
            type="url"
            autoComplete="off"
            placeholder="https://hooks.example.com/testbay"
            className={formControl}
            value={url}
            onChange={(event) => setUrl(event.target.value)}
            aria-invalid={field === "url" && Boolean(error)}
            aria-describedby={describedBy("url")}
          />
          {problemAt("url")}
        </div>
        <div className="flex max-w-xs flex-col gap-1">
          {editing ? (
            <>
              <span className="text-xs text-muted">Format</span>
              <span className="flex h-9 items-center text-sm">{formatNames[editing.format]}</span>
              <span className="text-xs text-muted">
                Not editable: add a webhook in the other format, then delete this one.
              </span>
            </>
          ) : (
            <>
              <label htmlFor={ids.format} className="text-xs text-muted">
                Format
              </label>
              <ChoiceSelect
                id={ids.format}
                value={format}
                choices={webhookFormats}
                name={(value) => formatNames[value]}
                onChange={setFormat}
              />
            </>
          )}
        </div>
        <div className="flex w-full max-w-xs flex-col gap-1">
          <label htmlFor={ids.description} className="text-xs text-muted">
            Description (optional)
          </label>
          <input
            ref={descriptionInput}
            id={ids.description}
            className={formControl}
            maxLength={500}
            value={description}
            onChange={(event) => setDescription(event.target.value)}
            aria-invalid={field === "description" && Boolean(error)}
            aria-describedby={describedBy("description")}
          />
          {problemAt("description")}
        </div>
      </div>
      <fieldset ref={eventsSet} className="space-y-1" aria-describedby={describedBy("events")}>
        <legend className="text-xs text-muted">Events</legend>
        <div className="flex flex-wrap gap-x-4 gap-y-1">
          {webhookEvents.map((event) => (
            <label key={event.name} className="inline-flex items-center gap-2 text-sm">
              <input
                type="checkbox"
                checked={events.has(event.name)}
                onChange={(change) => tick(event.name, change.target.checked)}
              />
              <span>
                <span className="font-mono">{event.name}</span>
                <span className="text-muted"> ({event.help})</span>
              </span>
            </label>
          ))}
        </div>
        {problemAt("events")}
      </fieldset>
      <div className="flex flex-wrap gap-2">
        <button type="submit" className={primaryButton} disabled={sending.isPending}>
          {editing ? "Save changes" : "Add webhook"}
        </button>
        {props.webhook && (
          <button type="button" className={`${quietButton} h-9`} onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
      {error && !field && <ProblemMessage error={error} />}
    </form>
  );
}
