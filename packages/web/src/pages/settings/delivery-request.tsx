import type { WebhookAttempt, WebhookDelivery } from "../../api/webhooks.ts";
import { InlineColumnHeaders } from "../../components/inline-column-headers.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { attemptText, prettyBody } from "./webhooks-format.ts";

// Scrolls inside itself rather than stretching the page; focusable, so the keyboard scrolls it too (WCAG 2.1.1).
const scrollingPre = "overflow-auto rounded-md border border-line bg-sunken p-2 font-mono text-xs";

/**
 * What a delivery sent and got back, for finding out why a receiver refused it: the body (the same bytes on every
 * attempt, indented when it is JSON; before the first, what will be sent), then per attempt the URL it went to,
 * every header, and the answer.
 */
export function DeliveryRequest({ delivery, id }: { delivery: WebhookDelivery; id: string }) {
  return (
    <div id={id} className="space-y-3 text-sm">
      <div className="space-y-1">
        <h3 className="text-xs font-medium text-muted">
          {delivery.attempts.length === 0 ? "Body to send" : "Body sent"}
        </h3>
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard */}
        <pre tabIndex={0} className={`${scrollingPre} max-h-64 whitespace-pre`}>
          {prettyBody(delivery.request_body)}
        </pre>
      </div>
      {delivery.attempts.length === 0 ? (
        <p className="text-muted">No attempt yet.</p>
      ) : (
        <ol className="space-y-3">
          {delivery.attempts.map((attempt, index) => (
            <li key={attempt.at} className="space-y-2 border-t border-line pt-2">
              <AttemptRequest attempt={attempt} number={index + 1} of={delivery.attempts.length} />
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

/** One attempt: when and how it ended, the URL, the headers as a table, the start of the answer's body. */
function AttemptRequest({ attempt, number, of }: { attempt: WebhookAttempt; number: number; of: number }) {
  // None for attempts made before the server kept requests, or for a message it could not sign (the error says why).
  const { request } = attempt;
  return (
    <>
      <h3 className="text-xs font-medium">
        Attempt {number} of {of}, <Timestamp value={attempt.at} />: {attemptText(attempt)}
      </h3>
      {request === null ? (
        <p className="text-xs text-muted">No request recorded for this attempt.</p>
      ) : (
        <>
          <div className="font-mono text-xs break-all">
            <span className="text-muted">POST </span>
            {request.url}
          </div>
          <div className="overflow-x-auto">
            <table className="text-left text-xs">
              <caption className="sr-only">
                Headers sent in attempt {number} of {of}
              </caption>
              <thead className="text-muted">
                <tr>
                  <InlineColumnHeaders names={["Header", "Value"]} padding="py-0.5" />
                </tr>
              </thead>
              <tbody className="font-mono">
                {Object.entries(request.headers).map(([name, value]) => (
                  <tr key={name} className="align-top">
                    <th scope="row" className="py-0.5 pr-3 font-normal whitespace-nowrap">
                      {name}
                    </th>
                    <td className="py-0.5 break-all">{value}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
      {/* No answer: the heading already says why (timed out, refused, address not allowed). */}
      {attempt.status_code !== null && (
        <div className="space-y-1">
          <h4 className="text-xs text-muted">Answer's body (its first KiB)</h4>
          {attempt.response_body ? (
            // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard
            <pre tabIndex={0} className={`${scrollingPre} max-h-32 whitespace-pre-wrap break-all`}>
              {attempt.response_body}
            </pre>
          ) : (
            <p className="text-xs text-muted">empty</p>
          )}
        </div>
      )}
    </>
  );
}
