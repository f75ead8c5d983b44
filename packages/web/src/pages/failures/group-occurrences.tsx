import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { FailureEvidence } from "../run/failure-evidence.tsx";
import {
  type FailureFilters,
  type FailureGroup,
  failedTestsQuery,
  occurrencesQuery,
} from "./failures-api.ts";

const runLink = "text-accent underline";

/**
 * An opened group: its example (message, the head of its stack, and its screenshot as the run page shows it,
 * run/failure-evidence.tsx), then every occurrence, newest first, each linking to its run.
 */
export function GroupOccurrences({ group, filters }: { group: FailureGroup; filters: FailureFilters }) {
  const occurrences = useQuery(occurrencesQuery(group.signature, filters));
  return (
    <div className="space-y-4 border-t border-line pt-3">
      <Example group={group} />
      {occurrences.error && <ProblemMessage error={occurrences.error} />}
      {occurrences.data && (
        // On a phone the table scrolls sideways rather than squeeze a test's name a letter a line.
        <div className="overflow-x-auto">
          <table className="w-full min-w-[36rem] text-left text-sm">
            <caption className="sr-only">Occurrences of {group.title}</caption>
            <thead className="text-xs text-muted">
              <tr>
                <th className="py-1 pr-3 font-normal">Test</th>
                <th className="py-1 pr-3 font-normal">Version</th>
                <th className="py-1 pr-3 font-normal">Device</th>
                <th className="py-1 pr-3 font-normal">When</th>
                <th className="py-1 font-normal">Run</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-line">
              {occurrences.data.items.map((item) => (
                <tr
                  key={`${item.execution_id}-${item.device_run_id}-${item.attempt}-${item.classname}-${item.name}`}
                >
                  <td className="py-1.5 pr-3 break-words">
                    {item.name}
                    <span className="block text-xs text-muted">{item.classname}</span>
                  </td>
                  <td className="py-1.5 pr-3">{item.version ?? "—"}</td>
                  <td className="py-1.5 pr-3">{item.device ?? "—"}</td>
                  <td className="py-1.5 pr-3 whitespace-nowrap">
                    <Timestamp value={item.at} />
                  </td>
                  <td className="py-1.5 whitespace-nowrap">
                    <Link to="/runs/$runId" params={{ runId: item.execution_id }} className={runLink}>
                      Open run
                    </Link>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function Example({ group }: { group: FailureGroup }) {
  const { example } = group;
  const tests = useQuery({ ...failedTestsQuery(example.execution_id), enabled: example.test_id !== null });
  const test = tests.data?.find((item) => item.id === example.test_id);
  return (
    <div className="space-y-2">
      <h3 className="text-sm font-medium">Example</h3>
      {example.message && <p className="text-sm break-words">{example.message}</p>}
      {example.stack_head && (
        <pre className="overflow-x-auto rounded-md bg-sunken p-2 font-mono text-xs">{example.stack_head}</pre>
      )}
      {test && <FailureEvidence runId={example.execution_id} test={test} live={false} />}
    </div>
  );
}
