import { Link } from "@tanstack/react-router";
import { ApiProblem } from "../../api/problem.ts";
import { ProblemMessage } from "../../components/problem-message.tsx";

/**
 * An app the organization does not have (or an unreadable answer): said plainly, with the API's own detail and
 * fix, the registered name when only the case differs, and the way back to the apps.
 */
export function AppNotFound({ packageName, error }: { packageName: string; error: unknown }) {
  const notFound = error instanceof ApiProblem && error.status === 404;
  const suggestion =
    error instanceof ApiProblem ? (error.problem as { did_you_mean?: unknown }).did_you_mean : undefined;
  return (
    <section className="space-y-4">
      <h1 className="text-xl font-semibold break-all">{notFound ? "App not found" : packageName}</h1>
      <ProblemMessage error={error} />
      <p className="flex flex-wrap gap-4 text-sm">
        {typeof suggestion === "string" && (
          <Link
            to="/apps/$packageName"
            params={{ packageName: suggestion }}
            className="text-accent underline"
          >
            Open {suggestion}
          </Link>
        )}
        <Link to="/apps" className="text-accent underline">
          See all apps
        </Link>
      </p>
    </section>
  );
}
