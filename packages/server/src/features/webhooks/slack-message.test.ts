import { describe, expect, it } from "vitest";
import { slackMessage } from "./slack-message.ts";

describe("slackMessage", () => {
  it("says what ended how, with app, version, plan, counts and a link to the run", () => {
    const message = slackMessage(
      "execution.finished",
      {
        id: "ex_1",
        status: "failed",
        package_name: "com.example.shop",
        version: "2.0.1",
        test_plan_id: "tp_9",
        summary: { tests: 12, passed: 9, failed: 2, skipped: 0, flaky: 1 },
      },
      "https://testbay.example.com/v1",
    );
    expect(message.text).toBe(
      "<https://testbay.example.com/runs/ex_1|Run ex_1> of com.example.shop 2.0.1 failed",
    );
    expect(message.blocks).toEqual([
      { type: "section", text: { type: "mrkdwn", text: message.text } },
      {
        type: "section",
        fields: [
          { type: "mrkdwn", text: "*App*\ncom.example.shop" },
          { type: "mrkdwn", text: "*Version*\n2.0.1" },
          { type: "mrkdwn", text: "*Plan*\ntp_9" },
          { type: "mrkdwn", text: "*Tests*\n9 passed, 2 failed, 1 flaky, 0 skipped of 12" },
        ],
      },
    ]);
  });

  it("names a flaky test and its rate, without a link when the server has no public URL", () => {
    const message = slackMessage(
      "test.flaky_detected",
      { test: { classname: "LoginTest", name: "signIn" }, test_plan_id: "tp_1", flaky_rate: 0.25 },
      undefined,
    );
    expect(message.text).toBe("Test LoginTest.signIn turned flaky");
    expect(JSON.stringify(message.blocks)).toContain("*Flaky rate*\\n25%");
  });
});
