export { ctrfReport } from "./ctrf-report.ts";
export type { FailureGroupRef, FailureGroupsOfExecution } from "./report-model.ts";
export { createReports } from "./reports.feature.ts";
