import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { logQuery } from "../../api/executions.ts";
import { ProblemMessage } from "../../components/problem-message.tsx";

/**
 * The run's log; while it runs, new lines arrive and the view follows them unless the reader scrolled up. A
 * session's page calls it the agent's log (`title`): the session's own logs are Appium's and the device's.
 */
export function RunLog({ runId, live, title = "Log" }: { runId: string; live: boolean; title?: string }) {
  const log = useQuery(logQuery(runId, live));
  const view = useRef<HTMLElement>(null);
  const text = log.data ?? "";

  useEffect(() => {
    const element = view.current;
    if (!element || !text) return;
    const nearBottom = element.scrollHeight - element.scrollTop - element.clientHeight < 80;
    if (live && nearBottom) element.scrollTop = element.scrollHeight;
  }, [text, live]);

  return (
    <section aria-labelledby="run-log" className="space-y-2">
      <h2 id="run-log" className="text-lg font-semibold">
        {title}
        {live && <span className="ml-2 text-sm font-normal text-muted">live</span>}
      </h2>
      {log.error && <ProblemMessage error={log.error} />}
      <section
        ref={view}
        // A scrollable region a keyboard can reach and scroll, named for screen readers.
        // biome-ignore lint/a11y/noNoninteractiveTabindex: the log scrolls, and keyboard readers must reach it
        tabIndex={0}
        aria-label={title === "Log" ? "Run log" : title}
        className="max-h-96 overflow-auto rounded-lg border border-line bg-sunken p-3"
      >
        <pre className="font-mono text-xs leading-5 break-words whitespace-pre-wrap">
          {text || (log.isPending ? "Loading the log…" : "No log lines yet.")}
        </pre>
      </section>
    </section>
  );
}
