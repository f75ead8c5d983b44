import { useId, useRef } from "react";

const button = "rounded-md border border-line px-3 py-1.5 text-sm hover:bg-sunken disabled:opacity-50";

/** What the dialog says of what stops: a run's tests, or a WebDriver session (API.md §12) its client drives. */
const consequences = {
  run: "Tests in progress stop; finished results are kept. A cancelled run cannot be resumed: re-run it to test again.",
  session:
    "The session ends at once: its client's next command is refused, and its command log, video and device log are kept. A session cannot be resumed: its client opens a new one.",
} as const;

/**
 * The run's Cancel button, which asks first: cancelling cannot be undone. The question is a modal dialog (focus
 * inside it on "Keep running", the safe answer; Escape keeps running too; focus goes back to the button after).
 */
export function CancelRunButton({
  disabled,
  label,
  onConfirm,
  what = "run",
}: {
  disabled: boolean;
  label: string;
  onConfirm: () => void;
  what?: keyof typeof consequences;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const id = useId();
  return (
    <>
      <button
        type="button"
        className={`${button} text-red-700 dark:text-red-300`}
        disabled={disabled}
        aria-haspopup="dialog"
        onClick={() => dialog.current?.showModal()}
      >
        {label}
      </button>
      <dialog
        ref={dialog}
        aria-labelledby={`${id}-title`}
        aria-describedby={`${id}-detail`}
        className="m-auto w-[min(26rem,92vw)] rounded-lg border border-line bg-surface p-4 text-ink backdrop:bg-black/50"
      >
        <h2 id={`${id}-title`} className="font-semibold">
          Cancel this {what}?
        </h2>
        <p id={`${id}-detail`} className="mt-1 text-sm text-muted">
          {consequences[what]}
        </p>
        <div className="mt-4 flex flex-wrap justify-end gap-2">
          {/* autoFocus: the dialog opens on the answer that changes nothing. */}
          {/* biome-ignore lint/a11y/noAutofocus: focus moves into a modal dialog as it opens, as it should */}
          <button type="button" autoFocus className={button} onClick={() => dialog.current?.close()}>
            Keep running
          </button>
          <button
            type="button"
            className="rounded-md bg-red-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-red-800 dark:bg-red-600 dark:hover:bg-red-500"
            onClick={() => {
              dialog.current?.close();
              onConfirm();
            }}
          >
            Cancel {what}
          </button>
        </div>
      </dialog>
    </>
  );
}
