// The shapes the dashboard reads, named once from the OpenAPI document's generated types (the client package's),
// so a field renamed in the API fails the dashboard's typecheck instead of a page at run time.
import type { components, operations } from "../../../client/src/sdk/api.generated.ts";

type Schemas = components["schemas"];
type JsonOf<Operation extends keyof operations> = operations[Operation]["responses"] extends {
  200: { content: { "application/json": infer Body } };
}
  ? Body
  : never;

export type Execution = Schemas["Execution"];
export type ExecutionStatus = Schemas["ExecutionStatus"];
export type DeviceRun = Schemas["DeviceRun"];
export type Summary = Schemas["Summary"];
export type TestPlan = Schemas["TestPlan"];
export type App = Schemas["App"];
export type Problem = Schemas["Problem"];
export type TestCase = JsonOf<"listExecutionTests">["items"][number];
export type TestCaseStatus = TestCase["status"];
export type Agent = JsonOf<"listAgents">["items"][number];
export type SessionState = JsonOf<"getSession">;
export type Person = Extract<SessionState, { signed_in: true }>["user"];

/** Runs in these states change no more: their pages stop polling. */
export const finalStatuses: ReadonlySet<ExecutionStatus> = new Set([
  "passed",
  "failed",
  "errored",
  "cancelled",
]);
