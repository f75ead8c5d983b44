import type { Execution } from "../api/types.ts";
import { Fact } from "./fact.tsx";

/** Where a run or a session came from in CI, as header facts (inside the header's `dl`): only what CI said. */
export function CiFacts({ ci }: { ci: Execution["ci"] }) {
  return (
    <>
      {ci?.branch && (
        <Fact label="Branch">
          <code className="text-xs">{ci.branch}</code>
        </Fact>
      )}
      {ci?.commit && (
        <Fact label="Commit">
          <code className="text-xs" title={ci.commit}>
            {ci.commit.slice(0, 12)}
          </code>
        </Fact>
      )}
      {ci?.pull_request && <Fact label="Pull request">#{ci.pull_request}</Fact>}
      {ci?.provider && (
        <Fact label="CI">
          {ci.build_url ? (
            <a href={ci.build_url} className="text-accent hover:underline" rel="noreferrer" target="_blank">
              {ci.provider} job
            </a>
          ) : (
            ci.provider
          )}
        </Fact>
      )}
    </>
  );
}
