import { describe, expect, it } from "vitest";
import { afterSignIn } from "./after-sign-in.ts";

const origin = "https://testbay.example.com";

describe("where the sign-in page leads", () => {
  it("goes back to the dashboard page the person was headed for, query included", () => {
    expect(afterSignIn("/runs/ex_1?tab=log", origin)).toBe("/runs/ex_1?tab=log");
    expect(afterSignIn("/agents", origin)).toBe("/agents");
  });

  it.each([
    undefined,
    "",
    "https://evil.example/runs",
    "//evil.example/runs",
    "/\\evil.example",
    "javascript:alert(1)",
    "/sign-in?redirect=/runs",
  ])("goes to the runs instead of %j", (redirect) => {
    expect(afterSignIn(redirect, origin)).toBe("/runs");
  });
});
