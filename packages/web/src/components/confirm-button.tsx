import { type ReactNode, useId, useRef } from "react";

const button = "rounded-md border border-line px-3 py-1.5 text-sm hover:bg-sunken disabled:opacity-50";

/**
 * A button for what cannot be undone (cancel a run, delete a schedule), which asks first. The question is a modal
 * dialog: focus inside it on the answer that changes nothing (`keepLabel`), Escape answers that too, and focus goes
 * back to the button after.
 */
export function ConfirmButton({
  label,
  disabled,
  question,
  detail,
  keepLabel,
  confirmLabel,
  onConfirm,
}: {
  label: string;
  disabled: boolean;
  question: string;
  detail: ReactNode;
  keepLabel: string;
  confirmLabel: string;
  onConfirm: () => void;
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
          {question}
        </h2>
        <p id={`${id}-detail`} className="mt-1 text-sm text-muted">
          {detail}
        </p>
        <div className="mt-4 flex flex-wrap justify-end gap-2">
          {/* biome-ignore lint/a11y/noAutofocus: focus moves into a modal dialog as it opens, as it should */}
          <button type="button" autoFocus className={button} onClick={() => dialog.current?.close()}>
            {keepLabel}
          </button>
          <button
            type="button"
            className="rounded-md bg-red-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-red-800 dark:bg-red-600 dark:hover:bg-red-500"
            onClick={() => {
              dialog.current?.close();
              onConfirm();
            }}
          >
            {confirmLabel}
          </button>
        </div>
      </dialog>
    </>
  );
}
