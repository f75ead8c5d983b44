// testbay.yaml takes retry_failed_tests among a device step's options, as POST /testplans does (0–5).
import { describe, expect, it } from "vitest";
import { formatIssue, PlansFileError, parsePlansFile } from "./parse.ts";

const plans = (retries: string) => `app: com.example.shop
plans:
  - name: smoke
    devices: [{platform: android}]
    steps:
      - type: instrumentation
        retry_failed_tests: ${retries}
      - type: maestro
        flows: ["appId: com.example.shop"]
        retry_failed_tests: 1
`;

function problems(text: string): string[] {
  try {
    parsePlansFile(text, "testbay.yaml");
    return [];
  } catch (error) {
    if (error instanceof PlansFileError) return error.issues.map((i) => formatIssue("testbay.yaml", i));
    throw error;
  }
}

describe("retry_failed_tests in testbay.yaml", () => {
  it("is taken on instrumentation and maestro steps", () => {
    const parsed = parsePlansFile(plans("2"), "testbay.yaml");
    expect(parsed.content.plans[0]?.steps).toMatchObject([
      { retry_failed_tests: 2 },
      { retry_failed_tests: 1 },
    ]);
  });

  it("is refused above 5 and below 0, at the value", () => {
    expect(problems(plans("6"))).toEqual([
      expect.stringMatching(/^testbay\.yaml:7:29: .*retry_failed_tests.*5/),
    ]);
    expect(problems(plans("-1"))).toEqual([
      expect.stringMatching(/^testbay\.yaml:7:29: .*retry_failed_tests.*0/),
    ]);
  });
});
