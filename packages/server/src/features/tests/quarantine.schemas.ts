import { Type } from "typebox";
import type { QuarantineRecord } from "./quarantine.repo.ts";

/** A test's id as GET /v1/tests and GET /v1/executions/{id}/tests give it. */
export const TestId = Type.String({
  minLength: 3,
  maxLength: 64,
  pattern: "^t_[0-9a-f]+$",
  description: "The test's id within its plan, as GET /v1/tests and GET /v1/executions/{id}/tests give it",
});

export const TestParams = Type.Object({ test_id: TestId });

export const QuarantineBody = Type.Object(
  {
    reason: Type.String({
      minLength: 1,
      maxLength: 500,
      description: "Why it is quarantined (a ticket, what is being fixed), shown beside the test",
    }),
  },
  { additionalProperties: false },
);

export const QuarantineView = Type.Object({
  test_id: Type.String(),
  test_plan_id: Type.String(),
  classname: Type.String(),
  name: Type.String(),
  reason: Type.String(),
  quarantined_by: Type.String({
    description: "Who quarantined it, as the audit log names them: the person's email or the client's ID",
  }),
  quarantined_at: Type.String({ format: "date-time", description: "Since when it is quarantined" }),
});

export const quarantineView = (record: QuarantineRecord) => ({
  test_id: record.testId,
  test_plan_id: record.testPlanId,
  classname: record.classname,
  name: record.name,
  reason: record.reason,
  quarantined_by: record.quarantinedBy,
  quarantined_at: record.quarantinedAt,
});
