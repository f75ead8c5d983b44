import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import {
  type CreatedWebhook,
  deleteWebhook,
  deliveriesQuery,
  rotateWebhookSecret,
  sendWebhookTest,
  setWebhookEnabled,
  type Webhook,
  webhooksQuery,
} from "../../api/webhooks.ts";
import { LiveStatus } from "../../components/live-status.tsx";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { OneTimeSecret } from "./one-time-secret.tsx";
import { dangerButton, quietButton } from "./settings-classes.ts";
import { WebhookDeliveries } from "./webhook-deliveries.tsx";
import { WebhookForm } from "./webhook-form.tsx";
import { webhookHealth } from "./webhooks-format.ts";

/**
 * The organization's webhooks: where run results are sent, and each one's delivery log. Everyone reads them (the
 * API lets viewers read); members and admins add, edit, enable or disable, rotate, test and delete (`canChange`).
 * Editing happens in place: the webhook's form takes the focus, and gives it back to its Edit button when done.
 */
export function WebhooksSection({ canChange }: { canChange: boolean }) {
  const queries = useQueryClient();
  const webhooks = useQuery(webhooksQuery);
  const [revealed, setRevealed] = useState<{ webhook: CreatedWebhook; rotated: boolean }>();
  const [confirmingDelete, setConfirmingDelete] = useState<string>();
  /** The webhook whose edit form is open, in place of its summary and buttons. */
  const [editing, setEditing] = useState<string>();
  /** The webhook whose Edit button gets the focus back once its form has closed (and the button is back). */
  const [refocus, setRefocus] = useState<string>();
  const editButtons = useRef(new Map<string, HTMLButtonElement>());
  /** Webhooks whose delivery log is open: a test sent opens it, so its delivery shows. */
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const [result, setResult] = useState("");
  const heading = useRef<HTMLHeadingElement>(null);
  const refresh = () => queries.invalidateQueries({ queryKey: webhooksQuery.queryKey });
  const closeEdit = (id: string) => {
    setEditing(undefined);
    setRefocus(id);
  };
  useEffect(() => {
    if (refocus === undefined) return;
    editButtons.current.get(refocus)?.focus();
    setRefocus(undefined);
  }, [refocus]);
  const showLog = (id: string, shown: boolean) =>
    setOpen((current) => {
      const next = new Set(current);
      if (shown) next.add(id);
      else next.delete(id);
      return next;
    });

  // gcTime 0: an answer with a secret leaves the mutation cache as soon as nothing shows it.
  const rotate = useMutation({
    mutationFn: rotateWebhookSecret,
    gcTime: 0,
    onSuccess: (webhook) => {
      setRevealed({ webhook, rotated: true });
      setResult(`Webhook ${webhook.id} has a new secret.`);
    },
  });
  const toggle = useMutation({
    mutationFn: ({ webhook, enable }: { webhook: Webhook; enable: boolean }) =>
      setWebhookEnabled(webhook.id, enable),
    onSuccess: (webhook) => {
      setResult(`Webhook to ${webhook.url} ${webhook.enabled ? "enabled" : "disabled"}.`);
      return refresh();
    },
  });
  const test = useMutation({
    mutationFn: (webhook: Webhook) => sendWebhookTest(webhook.id),
    onSuccess: (deliveryId, webhook) => {
      setResult(`Test message ${deliveryId} queued for ${webhook.url}.`);
      showLog(webhook.id, true);
      return queries.invalidateQueries({ queryKey: ["settings", "webhooks", webhook.id, "deliveries"] });
    },
  });
  const remove = useMutation({
    mutationFn: deleteWebhook,
    onSuccess: (_nothing, id) => {
      setConfirmingDelete(undefined);
      setResult(`Webhook ${id} deleted.`);
      heading.current?.focus();
      return refresh();
    },
  });
  const failure = rotate.error ?? toggle.error ?? test.error ?? remove.error;

  return (
    <section aria-labelledby="webhooks-heading" className="space-y-4">
      <div>
        <h2 id="webhooks-heading" ref={heading} tabIndex={-1} className="text-lg font-semibold outline-none">
          Webhooks
        </h2>
        <p className="text-sm text-muted">
          Tell other systems when runs start and finish, builds arrive and tests turn flaky: signed per
          Standard Webhooks, or posted to a Slack channel.
          {canChange ? "" : " Members and administrators change them."}
        </p>
      </div>
      {canChange && (
        <WebhookForm
          onCreated={(webhook) => {
            setRevealed(webhook.secret ? { webhook, rotated: false } : undefined);
            setResult(`Webhook to ${webhook.url} added.`);
            return refresh();
          }}
        />
      )}
      {revealed?.webhook.secret && (
        <OneTimeSecret
          key={`${revealed.webhook.id}:${revealed.rotated}`}
          title={
            revealed.rotated
              ? `New signing secret of the webhook to ${revealed.webhook.url}: copy it now`
              : `Webhook to ${revealed.webhook.url} added: copy its signing secret now`
          }
          copyText={revealed.webhook.secret}
          copyLabel="Copy the secret"
          onDone={() => {
            setRevealed(undefined);
            heading.current?.focus();
          }}
        >
          <p>
            <strong>You will not see this secret again.</strong> Give it to the receiver now: it verifies each
            delivery's <code>webhook-signature</code> with it, per Standard Webhooks (the standardwebhooks
            libraries take it as it is). If it is lost, rotate the secret.
          </p>
        </OneTimeSecret>
      )}
      <LiveStatus>{result}</LiveStatus>
      {failure && <ProblemMessage error={failure} />}
      {webhooks.error && <ProblemMessage error={webhooks.error} />}
      {webhooks.isPending && <p className="text-muted">Loading webhooks…</p>}
      {webhooks.data && webhooks.data.length === 0 && <p className="text-muted">No webhooks yet.</p>}
      {webhooks.data && webhooks.data.length > 0 && (
        <ul className="space-y-3" aria-label="Webhooks">
          {webhooks.data.map((webhook) => (
            <li
              key={webhook.id}
              aria-label={webhook.url}
              className="space-y-3 rounded-lg border border-line bg-surface p-3 text-sm"
            >
              {editing === webhook.id ? (
                <WebhookForm
                  webhook={webhook}
                  onCancel={() => closeEdit(webhook.id)}
                  onDone={(saved) => {
                    closeEdit(webhook.id);
                    if (!saved) {
                      setResult(`Nothing changed in the webhook to ${webhook.url}.`);
                      return;
                    }
                    // The list shows the change at once; the refresh confirms it.
                    queries.setQueryData(webhooksQuery.queryKey, (list) =>
                      list?.map((item) => (item.id === saved.id ? saved : item)),
                    );
                    setResult(`Webhook to ${saved.url} saved.`);
                    return refresh();
                  }}
                />
              ) : (
                <WebhookSummary webhook={webhook} />
              )}
              <div className={`flex flex-wrap gap-2 ${editing === webhook.id ? "hidden" : ""}`}>
                {canChange && (
                  <>
                    <button
                      ref={(button) => {
                        if (button) editButtons.current.set(webhook.id, button);
                        else editButtons.current.delete(webhook.id);
                      }}
                      type="button"
                      className={quietButton}
                      aria-label={`Edit the webhook to ${webhook.url}`}
                      onClick={() => {
                        setConfirmingDelete(undefined);
                        setEditing(webhook.id);
                      }}
                    >
                      Edit
                    </button>
                    <button
                      type="button"
                      className={webhook.enabled ? dangerButton : quietButton}
                      disabled={toggle.isPending}
                      aria-label={`${webhook.enabled ? "Disable" : "Enable"} the webhook to ${webhook.url}`}
                      onClick={() => toggle.mutate({ webhook, enable: !webhook.enabled })}
                    >
                      {webhook.enabled ? "Disable" : "Enable"}
                    </button>
                    <button
                      type="button"
                      className={quietButton}
                      disabled={test.isPending}
                      aria-label={`Send test to ${webhook.url}`}
                      onClick={() => test.mutate(webhook)}
                    >
                      Send test
                    </button>
                    {webhook.format === "standard" && (
                      <button
                        type="button"
                        className={quietButton}
                        disabled={rotate.isPending}
                        aria-label={`Rotate secret of the webhook to ${webhook.url}`}
                        onClick={() => {
                          setRevealed(undefined);
                          rotate.mutate(webhook.id);
                        }}
                      >
                        Rotate secret
                      </button>
                    )}
                    <button
                      type="button"
                      className={dangerButton}
                      aria-label={`Delete the webhook to ${webhook.url}`}
                      onClick={() => setConfirmingDelete(webhook.id)}
                    >
                      Delete
                    </button>
                  </>
                )}
                <button
                  type="button"
                  className={quietButton}
                  aria-expanded={open.has(webhook.id)}
                  aria-label={`${open.has(webhook.id) ? "Hide deliveries" : "Deliveries"} of ${webhook.url}`}
                  onClick={() => showLog(webhook.id, !open.has(webhook.id))}
                >
                  {open.has(webhook.id) ? "Hide deliveries" : "Deliveries"}
                </button>
              </div>
              {confirmingDelete === webhook.id && (
                <div
                  role="alertdialog"
                  aria-label={`Delete the webhook to ${webhook.url}?`}
                  className="space-y-2 rounded-lg border border-red-300 bg-red-50 p-3 dark:border-red-800 dark:bg-red-950"
                >
                  <p>
                    Delete the webhook to <span className="break-all">{webhook.url}</span>? Nothing more is
                    sent to it, and its delivery log goes with it.
                  </p>
                  <div className="flex flex-wrap gap-2">
                    <button
                      type="button"
                      className={dangerButton}
                      disabled={remove.isPending}
                      onClick={() => remove.mutate(webhook.id)}
                    >
                      Delete it
                    </button>
                    <button
                      type="button"
                      className={quietButton}
                      onClick={() => setConfirmingDelete(undefined)}
                    >
                      Cancel
                    </button>
                  </div>
                </div>
              )}
              {open.has(webhook.id) && <WebhookDeliveries webhook={webhook} canChange={canChange} />}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

const chipTones = {
  enabled: "bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100",
  failing: "bg-red-100 text-red-900 dark:bg-red-900 dark:text-red-100",
  disabled: "bg-zinc-200 text-zinc-700 dark:bg-zinc-700 dark:text-zinc-200",
} as const;

/**
 * What a webhook is: where it posts, what, how, how it is doing (enabled, failing with its last error, or disabled
 * and why), and what it is for. Its health comes from its newest deliveries, the query its delivery log shares.
 */
function WebhookSummary({ webhook }: { webhook: Webhook }) {
  const deliveries = useQuery({ ...deliveriesQuery(webhook.id), enabled: webhook.enabled });
  const health = webhookHealth(webhook, deliveries.data);
  return (
    <div className="space-y-1">
      <div className="font-mono break-all">{webhook.url}</div>
      <div className="flex flex-wrap items-center gap-x-2 gap-y-1 text-muted">
        <span>{webhook.events.join(", ")}</span>·
        <span>{webhook.format === "slack" ? "Slack" : "signed"}</span>·
        <span className={`rounded-full px-2 py-0.5 text-xs font-medium ${chipTones[health.state]}`}>
          {health.label}
        </span>
        ·
        <span>
          added <Timestamp value={webhook.created_at} />
        </span>
      </div>
      {health.state === "failing" && (
        <p className="text-red-800 dark:text-red-200">
          {health.failed === 1 ? "The last delivery" : `The last ${health.failed} deliveries`} failed; last
          error <Timestamp value={health.lastErrorAt} />:{" "}
          <span className="break-words">{health.lastError}</span>.{" "}
          {health.nextAttemptAt ? (
            <>
              Next try <Timestamp value={health.nextAttemptAt} />.
            </>
          ) : (
            "Its retries are spent: open Deliveries to redeliver."
          )}
        </p>
      )}
      {webhook.description && <div>{webhook.description}</div>}
    </div>
  );
}
