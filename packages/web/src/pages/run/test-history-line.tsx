import type { TestHistory } from "../../api/test-history.ts";
import { type HistoryKind, historyNote } from "./test-history-note.ts";

// The words carry the meaning; the colour only helps the eye find a regression among repeat failures.
const tones: Record<HistoryKind, string> = {
  new: "text-sky-800 dark:text-sky-300",
  flaky: "text-amber-800 dark:text-amber-300",
  regression: "text-red-800 dark:text-red-300",
  failing: "text-muted",
};

/** A failed test's history in one line: new, flaky, a regression, or failing again (GET /v1/tests). */
export function TestHistoryLine({
  history,
  run,
}: {
  history: TestHistory | undefined;
  run: { id: string; finished: boolean };
}) {
  const note = historyNote(history, run);
  if (!note) return null;
  return (
    <p className={`text-xs font-medium ${tones[note.kind]}`}>
      <span className="sr-only">History: </span>
      {note.text}
    </p>
  );
}
