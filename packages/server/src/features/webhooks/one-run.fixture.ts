import { expect } from "vitest";
import { call, registerBasicApp, type TestServer } from "../../../test/harness.ts";

/**
 * For the webhooks' tests: com.example.basic 1.2.3 registered, a one-step plan on an Android device, and one
 * execution of it triggered (queued for the agent to take). Answers the execution's id.
 */
export async function triggerOneRun(server: TestServer, ci: Record<string, string>): Promise<string> {
  await registerBasicApp(server, ci);
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: "smoke",
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      steps: [{ type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"] }],
    },
  });
  expect(plan.status).toBe(201);
  const triggered = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(triggered.status).toBe(200);
  return triggered.body.execution.id;
}
