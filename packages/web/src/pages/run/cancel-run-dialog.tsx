import { ConfirmButton } from "../../components/confirm-button.tsx";

/** What the dialog says of what stops: a run's tests, or a WebDriver session (API.md §12) its client drives. */
const consequences = {
  run: "Tests in progress stop; finished results are kept. A cancelled run cannot be resumed: re-run it to test again.",
  session:
    "The session ends at once: its client's next command is refused, and its command log, video and device log are kept. A session cannot be resumed: its client opens a new one.",
} as const;

/**
 * The run's Cancel button, which asks first (components/confirm-button.tsx): cancelling cannot be undone.
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
  return (
    <ConfirmButton
      label={label}
      disabled={disabled}
      question={`Cancel this ${what}?`}
      detail={consequences[what]}
      keepLabel="Keep running"
      confirmLabel={`Cancel ${what}`}
      onConfirm={onConfirm}
    />
  );
}
