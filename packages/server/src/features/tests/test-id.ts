import { createHash } from "node:crypto";

/**
 * A test's identity within its plan, the same in every execution of the plan: what its history and quarantine
 * are keyed by, and what test_cases.test_id stores. Hashed so that any class and method name makes a short,
 * URL-safe id.
 */
export function testId(testPlanId: string, classname: string, name: string): string {
  const digest = createHash("sha256").update(`${testPlanId}\u0000${classname}\u0000${name}`).digest("hex");
  return `t_${digest.slice(0, 24)}`;
}
