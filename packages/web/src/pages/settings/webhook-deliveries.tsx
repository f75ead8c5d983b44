import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Fragment, useId, useState } from "react";
import {
  deliveriesQuery,
  redeliverWebhookMessage,
  type Webhook,
  type WebhookDelivery,
} from "../../api/webhooks.ts";
import { ActionsColumnHeader, ColumnHeader } from "../../components/column-header.tsx";
import { LiveStatus } from "../../components/live-status.tsx";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { WideTable } from "../../components/wide-table.tsx";
import { DeliveryRequest } from "./delivery-request.tsx";
import { quietButton } from "./settings-classes.ts";
import { attemptText, bodyExcerpt, deliveryStatusText, durationText } from "./webhooks-format.ts";

/**
 * A webhook's delivery log, newest first: per message its type, status, every attempt with its time and answer,
 * the last answer's status code, duration and error, and (for those who may change it) a Redeliver button. Each
 * message opens (a disclosure button) on what was sent: its body, and per attempt the URL, headers and answer.
 */
export function WebhookDeliveries({ webhook, canChange }: { webhook: Webhook; canChange: boolean }) {
  const queries = useQueryClient();
  const deliveries = useQuery(deliveriesQuery(webhook.id));
  const [result, setResult] = useState("");
  const detailsId = useId();
  /** Messages whose request is shown. */
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const toggle = (id: string) =>
    setExpanded((current) => {
      const next = new Set(current);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  const redeliver = useMutation({
    mutationFn: (deliveryId: string) => redeliverWebhookMessage(webhook.id, deliveryId),
    onSuccess: (deliveryId) => {
      setResult(`${deliveryId} queued again.`);
      return queries.invalidateQueries({ queryKey: deliveriesQuery(webhook.id).queryKey });
    },
  });

  // Pending: the sender still has it, a redeliver would only start its schedule over.
  const redeliverButton = (delivery: WebhookDelivery) => (
    <button
      type="button"
      className={quietButton}
      disabled={redeliver.isPending || delivery.status === "pending"}
      aria-label={`Redeliver ${delivery.id}`}
      onClick={() => redeliver.mutate(delivery.id)}
    >
      Redeliver
    </button>
  );

  // The table (from 640 px) and the cards (below) are both in the page, one hidden: each has its own ids.
  const detailsButton = (delivery: WebhookDelivery, layout: "table" | "card") => {
    const shown = expanded.has(delivery.id);
    return (
      <button
        type="button"
        className={quietButton}
        aria-expanded={shown}
        aria-controls={shown ? `${detailsId}-${layout}-${delivery.id}` : undefined}
        aria-label={`${shown ? "Hide request" : "Show request"} of ${delivery.id}`}
        onClick={() => toggle(delivery.id)}
      >
        {shown ? "Hide request" : "Show request"}
      </button>
    );
  };

  return (
    <div className="space-y-2">
      <LiveStatus>{result}</LiveStatus>
      {redeliver.error && <ProblemMessage error={redeliver.error} />}
      {deliveries.error && <ProblemMessage error={deliveries.error} />}
      {deliveries.isPending && <p className="text-muted">Loading deliveries…</p>}
      {deliveries.data && deliveries.data.length === 0 && (
        <p className="text-muted">Nothing sent yet{canChange ? ": send a test to see one." : "."}</p>
      )}
      {deliveries.data && deliveries.data.length > 0 && (
        <ul className="space-y-2 sm:hidden" aria-label={`Deliveries to ${webhook.url}, newest first`}>
          {deliveries.data.map((delivery) => (
            <li key={delivery.id} className="space-y-1 rounded-lg border border-line p-2">
              <div className="font-mono text-xs">{delivery.type}</div>
              <div className="font-mono text-xs text-muted break-all">{delivery.id}</div>
              <DeliveryStatus delivery={delivery} />
              <Attempts delivery={delivery} />
              <div className="flex flex-wrap gap-2 pt-1">
                {detailsButton(delivery, "card")}
                {canChange && redeliverButton(delivery)}
              </div>
              {expanded.has(delivery.id) && (
                <DeliveryRequest delivery={delivery} id={`${detailsId}-card-${delivery.id}`} />
              )}
            </li>
          ))}
        </ul>
      )}
      {deliveries.data && deliveries.data.length > 0 && (
        <WideTable
          caption={`Deliveries to ${webhook.url}, newest first`}
          surface={false}
          head={
            <>
              <ColumnHeader>Type</ColumnHeader>
              <ColumnHeader>Status</ColumnHeader>
              <ColumnHeader>Attempts</ColumnHeader>
              <ColumnHeader className="hidden sm:table-cell">Status code</ColumnHeader>
              <ColumnHeader className="hidden sm:table-cell">Duration</ColumnHeader>
              <ColumnHeader className="hidden md:table-cell">Error</ColumnHeader>
              {canChange && <ActionsColumnHeader />}
            </>
          }
        >
          {deliveries.data.map((delivery) => {
            const last = delivery.attempts.at(-1);
            const shown = expanded.has(delivery.id);
            return (
              <Fragment key={delivery.id}>
                <tr className={`align-top ${shown ? "" : "border-b border-line last:border-0"}`}>
                  <td className="px-3 py-2">
                    <div className="font-mono text-xs">{delivery.type}</div>
                    <div className="font-mono text-xs text-muted break-all">{delivery.id}</div>
                    <div className="pt-1">{detailsButton(delivery, "table")}</div>
                  </td>
                  <td className="px-3 py-2">
                    <DeliveryStatus delivery={delivery} />
                  </td>
                  <td className="px-3 py-2">
                    <Attempts delivery={delivery} />
                  </td>
                  <td className="hidden px-3 py-2 sm:table-cell">{last?.status_code ?? "—"}</td>
                  <td className="hidden px-3 py-2 whitespace-nowrap sm:table-cell">
                    {last ? durationText(last.duration_ms) : "—"}
                  </td>
                  <td className="hidden px-3 py-2 md:table-cell">{last?.error ?? "—"}</td>
                  {canChange && <td className="px-3 py-2">{redeliverButton(delivery)}</td>}
                </tr>
                {shown && (
                  <tr className="border-b border-line last:border-0">
                    <td colSpan={canChange ? 7 : 6} className="bg-sunken/40 px-3 pb-3">
                      <DeliveryRequest delivery={delivery} id={`${detailsId}-table-${delivery.id}`} />
                    </td>
                  </tr>
                )}
              </Fragment>
            );
          })}
        </WideTable>
      )}
    </div>
  );
}

/** Its status in words, and when it is tried next while the sender still has it. */
function DeliveryStatus({ delivery }: { delivery: WebhookDelivery }) {
  return (
    <div>
      {deliveryStatusText(delivery)}
      {delivery.next_attempt_at && (
        <div className="text-xs text-muted">
          next <Timestamp value={delivery.next_attempt_at} />
        </div>
      )}
    </div>
  );
}

/** Every attempt, oldest first: when, the answer (or none) and how long it took, the start of its body. */
function Attempts({ delivery }: { delivery: WebhookDelivery }) {
  if (delivery.attempts.length === 0) return <span className="text-muted">none yet</span>;
  return (
    <ol className="space-y-1 text-xs">
      {delivery.attempts.map((attempt) => {
        const excerpt = bodyExcerpt(attempt.response_body);
        return (
          <li key={attempt.at}>
            <Timestamp value={attempt.at} />: {attemptText(attempt)}
            {excerpt && <div className="font-mono text-muted break-all">{excerpt}</div>}
          </li>
        );
      })}
    </ol>
  );
}
