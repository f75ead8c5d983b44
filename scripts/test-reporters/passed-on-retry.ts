/**
 * Lists, after the run, every test that failed and then passed when Vitest ran it again (vitest.config.ts sets
 * `retry` under CI). A retry keeps one load-induced timeout on the 2-core CI machine from failing a whole
 * submission, but a test that needed it is still a finding: this report names it with the error of the attempt
 * that failed, so it can be fixed at its cause (docs/development.md, "Tests that passed on a retry").
 */
import type { Reporter, TestCase } from "vitest/node";

interface Retried {
  name: string;
  retries: number;
  firstError: string;
}

export default class PassedOnRetryReporter implements Reporter {
  private readonly retried: Retried[] = [];

  onTestCaseResult(testCase: TestCase): void {
    const diagnostic = testCase.diagnostic();
    if (!diagnostic?.flaky) return;
    // The failed attempts' errors stay on a test that passed later (Vitest's runTest keeps result.errors).
    const error = testCase.result().errors?.[0];
    this.retried.push({
      name: `[${testCase.project.name}] ${testCase.module.relativeModuleId} > ${testCase.fullName}`,
      retries: diagnostic.retryCount,
      firstError: error ? (error.message.split("\n")[0] ?? "") : "(no error kept)",
    });
  }

  onTestRunEnd(): void {
    if (this.retried.length === 0) return;
    const lines = this.retried.map(
      (test) =>
        `  ${test.name}\n    passed after ${test.retries} ${test.retries === 1 ? "retry" : "retries"}; the failed attempt: ${test.firstError}`,
    );
    process.stdout.write(
      `\n${this.retried.length === 1 ? "1 test" : `${this.retried.length} tests`} passed only on a retry, each a flaky test to fix at its cause:\n${lines.join("\n")}\n`,
    );
  }
}
