import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useRef, useState } from "react";
import { maxReasonLength, quarantineChanged, quarantineTest, releaseTest } from "../../api/quarantine.ts";
import { useMayChange } from "../../api/role.ts";
import { ProblemMessage } from "../../components/problem-message.tsx";

const button = "rounded-md border border-line px-3 py-1.5 text-sm hover:bg-sunken disabled:opacity-50";

/**
 * A failed test's Quarantine button (it asks why, in a modal dialog: the reason is kept and shown to everyone) or,
 * for a quarantined one, Release. For members and admins; viewers do not see it (the API refuses them anyway).
 */
export function QuarantineControl({
  test,
  planId,
}: {
  test: { id: string; name: string; quarantined: boolean };
  planId: string;
}) {
  const mayChange = useMayChange();
  const queries = useQueryClient();
  const dialog = useRef<HTMLDialogElement>(null);
  const id = useId();
  const [reason, setReason] = useState("");

  const quarantine = useMutation({
    mutationFn: () => quarantineTest(test.id, reason.trim()),
    onSuccess: async () => {
      dialog.current?.close();
      setReason("");
      await quarantineChanged(queries, planId);
    },
  });
  const release = useMutation({
    mutationFn: () => releaseTest(test.id),
    onSuccess: () => quarantineChanged(queries, planId),
  });

  if (!mayChange) return null;
  if (test.quarantined) {
    return (
      <div className="space-y-2">
        <button
          type="button"
          className={button}
          disabled={release.isPending}
          onClick={() => release.mutate()}
        >
          {release.isPending ? "Releasing…" : "Release from quarantine"}
        </button>
        {release.error && <ProblemMessage error={release.error} />}
      </div>
    );
  }
  return (
    <>
      <button
        type="button"
        className={button}
        aria-haspopup="dialog"
        onClick={() => {
          quarantine.reset();
          dialog.current?.showModal();
        }}
      >
        Quarantine…
      </button>
      <dialog
        ref={dialog}
        aria-labelledby={`${id}-title`}
        aria-describedby={`${id}-detail`}
        className="m-auto w-[min(30rem,92vw)] rounded-lg border border-line bg-surface p-4 text-ink backdrop:bg-black/50"
      >
        <form
          onSubmit={(event) => {
            event.preventDefault();
            quarantine.mutate();
          }}
        >
          <h2 id={`${id}-title`} className="font-semibold break-all">
            Quarantine {test.name}?
          </h2>
          <p id={`${id}-detail`} className="mt-1 text-sm text-muted">
            It keeps running and its results stay visible, but its failures no longer fail runs of this plan
            until it is released. Say why, so that whoever reads it knows what is being fixed.
          </p>
          <label htmlFor={`${id}-reason`} className="mt-3 block text-sm font-medium">
            Reason
          </label>
          <textarea
            id={`${id}-reason`}
            required
            maxLength={maxReasonLength}
            rows={3}
            value={reason}
            onChange={(event) => setReason(event.target.value)}
            placeholder="Flaky on the payment sandbox: TB-123"
            className="mt-1 w-full rounded-md border border-line bg-surface px-2 py-1.5 text-sm"
          />
          {quarantine.error && <ProblemMessage error={quarantine.error} />}
          <div className="mt-4 flex flex-wrap justify-end gap-2">
            <button type="button" className={button} onClick={() => dialog.current?.close()}>
              Keep it failing runs
            </button>
            <button
              type="submit"
              disabled={quarantine.isPending || reason.trim() === ""}
              className="rounded-md bg-violet-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-violet-800 disabled:opacity-50 dark:bg-violet-600 dark:hover:bg-violet-500"
            >
              {quarantine.isPending ? "Quarantining…" : "Quarantine"}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}
