import { ApiProblem } from "../api/problem.ts";

/** A failed load, said the way the API said it (detail, then what to do about it). */
export function ProblemMessage({ error }: { error: unknown }) {
  const detail = error instanceof Error ? error.message : "Something went wrong.";
  const fix = error instanceof ApiProblem ? error.problem.fix : undefined;
  return (
    <div
      role="alert"
      className="rounded-md border border-red-300 bg-red-50 p-3 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100"
    >
      <p>{detail}</p>
      {fix && <p className="mt-1 text-red-800 dark:text-red-200">{fix}</p>}
    </div>
  );
}
