import { useMutation } from "@tanstack/react-query";
import { type FormEvent, useId, useState } from "react";
import { type CreatedWebhook, createWebhook, type WebhookFormat, webhookEvents } from "../../api/webhooks.ts";
import { filterControl, formControl } from "../../components/control-classes.ts";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { primaryButton } from "./settings-classes.ts";

/**
 * Adding a webhook: its URL, the events it gets (run finished checked, as most teams want that one), its format
 * and what it is for. What the API refuses (a private address, no event) is shown with the API's fix.
 */
export function WebhookForm({ onCreated }: { onCreated: (webhook: CreatedWebhook) => unknown }) {
  const ids = { url: useId(), format: useId(), description: useId(), events: useId() };
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<ReadonlySet<string>>(new Set(["execution.finished"]));
  const [format, setFormat] = useState<WebhookFormat>("standard");
  const [description, setDescription] = useState("");

  // gcTime 0: the answer carries the secret, which must not outlive the panel that shows it.
  const create = useMutation({
    mutationFn: createWebhook,
    gcTime: 0,
    onSuccess: (webhook) => {
      setUrl("");
      setDescription("");
      return onCreated(webhook);
    },
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({
      url: url.trim(),
      // In the order the API lists them, whatever order they were ticked in.
      events: webhookEvents.map((e) => e.name).filter((name) => events.has(name)),
      format,
      ...(description.trim() ? { description: description.trim() } : {}),
    });
  };
  const tick = (name: string, checked: boolean) =>
    setEvents((current) => {
      const next = new Set(current);
      if (checked) next.add(name);
      else next.delete(name);
      return next;
    });

  return (
    <form
      onSubmit={submit}
      noValidate
      aria-label="Add a webhook"
      className="space-y-3 rounded-lg border border-line bg-surface p-3"
    >
      <div className="flex flex-wrap items-start gap-3">
        <div className="flex w-full max-w-md flex-col gap-1">
          <label htmlFor={ids.url} className="text-xs text-muted">
            URL
          </label>
          <input
            id={ids.url}
            type="url"
            autoComplete="off"
            placeholder="https://hooks.example.com/testbay"
            className={formControl}
            value={url}
            onChange={(event) => setUrl(event.target.value)}
          />
        </div>
        <div className="flex flex-col gap-1">
          <label htmlFor={ids.format} className="text-xs text-muted">
            Format
          </label>
          <select
            id={ids.format}
            className={filterControl}
            value={format}
            onChange={(event) => setFormat(event.target.value as WebhookFormat)}
          >
            <option value="standard">Standard Webhooks (signed JSON)</option>
            <option value="slack">Slack incoming webhook</option>
          </select>
        </div>
        <div className="flex w-full max-w-xs flex-col gap-1">
          <label htmlFor={ids.description} className="text-xs text-muted">
            Description (optional)
          </label>
          <input
            id={ids.description}
            className={formControl}
            maxLength={500}
            value={description}
            onChange={(event) => setDescription(event.target.value)}
          />
        </div>
      </div>
      <fieldset className="space-y-1">
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
      </fieldset>
      <button type="submit" className={primaryButton} disabled={create.isPending}>
        Add webhook
      </button>
      {create.error && <ProblemMessage error={create.error} />}
    </form>
  );
}
