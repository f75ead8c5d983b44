export { Agent, type AgentOptions, claimDevice } from "./runtime/agent.ts";
export { type JobResult, runJob } from "./runtime/job-runner.ts";
