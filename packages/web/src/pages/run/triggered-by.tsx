import type { Execution } from "../../api/types.ts";

/**
 * Who triggered the run. A client shows its name (`client create --name`, or the built-in local agent's) with its
 * ID below it, smaller, for matching audit entries and CI logs; a client without a name shows its ID. A person
 * shows their email.
 */
export function TriggeredBy({ by }: { by: Execution["triggered_by"] }) {
  if (by.type === "person") return <span className="break-all">{by.id}</span>;
  const hint = "A client: a CI pipeline or a script with client credentials";
  if (!by.name) {
    return (
      <span title={hint}>
        client <code className="text-xs break-all">{by.id}</code>
      </span>
    );
  }
  return (
    <span title={`${hint} (${by.id})`}>
      <span className="break-words">{by.name}</span>
      <code className="block text-xs break-all text-muted">{by.id}</code>
    </span>
  );
}
