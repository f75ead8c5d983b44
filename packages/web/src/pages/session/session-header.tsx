import type { Execution } from "../../api/types.ts";
import { CiFacts } from "../../components/ci-facts.tsx";
import { Fact } from "../../components/fact.tsx";
import { StatusChip } from "../../components/status-chip.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { formatDuration, runDuration } from "../../format/duration.ts";
import { sessionLabel } from "../../format/session-label.ts";
import { RunActions } from "../run/run-actions.tsx";
import { TriggeredBy } from "../run/triggered-by.tsx";
import { sessionOutcome } from "./session-outcome.ts";

/** "Pixel 7 · 14 · emulator-5554": the device the agent reserved, else (while it waits) what the session asked. */
function deviceOf(session: Execution): string {
  const run = session.devices[0];
  const text = (value: unknown) => (typeof value === "string" && value ? value : undefined);
  const claimed = run?.claimed_device;
  const parts = claimed
    ? [text(claimed.model), text(claimed.os_version), text(claimed.serial)]
    : [text(run?.device?.platform), text(run?.device?.model), text(run?.device?.os_version)];
  return parts.filter(Boolean).join(" · ") || "any device";
}

/**
 * A WebDriver session's header (API.md §12): its name, its status and why (how it ended, and whether the client
 * set the status itself), the device and agent, the client that opened it, when and for how long.
 */
export function SessionHeader({ session }: { session: Execution }) {
  const outcome = sessionOutcome(session);
  const took = runDuration(session.started_at, session.finished_at);
  const run = session.devices[0];
  const ci = session.ci;
  return (
    <header className="space-y-4">
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="text-xl font-semibold break-all">{session.name ?? sessionLabel}</h1>
        <StatusChip status={session.status} />
        <span className="rounded-md border border-line px-2 py-0.5 text-xs text-muted">{sessionLabel}</span>
        <div className="ml-auto flex flex-wrap items-center gap-2">
          <RunActions run={session} />
        </div>
      </div>
      {outcome.sentence && (
        <p
          role="note"
          aria-label="Why"
          className={`rounded-md p-3 text-sm ${
            session.status === "passed"
              ? "bg-emerald-50 text-emerald-900 dark:bg-emerald-950 dark:text-emerald-100"
              : session.status === "cancelled"
                ? "bg-sunken"
                : "bg-red-50 text-red-900 dark:bg-red-950 dark:text-red-100"
          }`}
        >
          {outcome.sentence}
        </p>
      )}
      {session.waiting_reason && (
        <p
          role="status"
          className="rounded-md bg-amber-50 p-3 text-sm text-amber-900 dark:bg-amber-950 dark:text-amber-100"
        >
          Waiting for a device: {session.waiting_reason.detail}
        </p>
      )}
      <dl className="grid grid-cols-2 gap-x-6 gap-y-3 rounded-lg border border-line bg-surface p-4 text-sm sm:grid-cols-3 lg:grid-cols-4">
        <Fact label="Device">{deviceOf(session)}</Fact>
        <Fact label="Agent">{run?.agent_id ?? <span className="text-muted">—</span>}</Fact>
        <Fact label="Client">
          <TriggeredBy by={session.triggered_by} />
        </Fact>
        <Fact label="App">
          {session.package_name === null ? (
            <span className="text-muted">none registered</span>
          ) : (
            <>
              {session.package_name} <span className="text-muted">{session.version}</span>
            </>
          )}
        </Fact>
        <Fact label="Started">
          <Timestamp value={session.started_at} />
        </Fact>
        <Fact label="Ended">
          <Timestamp value={session.finished_at} />
        </Fact>
        <Fact label="Duration">{took === undefined ? "not started" : formatDuration(took)}</Fact>
        <Fact label="Session ID">
          <code className="text-xs break-all">{session.id}</code>
        </Fact>
        <CiFacts ci={ci} />
      </dl>
    </header>
  );
}
