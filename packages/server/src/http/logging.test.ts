import { describe, expect, it } from "vitest";
import { redactUrl } from "./logging.ts";

describe("redactUrl", () => {
  it("blanks sensitive query values and keeps the rest as sent", () => {
    expect(redactUrl("/v1/me?client_secret=abc&limit=5&x-api-key=t&Token=1&%73ecret=2")).toBe(
      "/v1/me?client_secret=[REDACTED]&limit=5&x-api-key=[REDACTED]&Token=[REDACTED]&%73ecret=[REDACTED]",
    );
  });

  it("leaves URLs without a query alone, and copes with malformed encoding", () => {
    expect(redactUrl("/v1/apps/com.example")).toBe("/v1/apps/com.example");
    expect(redactUrl("/v1/x?%zz=1&password")).toBe("/v1/x?%zz=1&password=[REDACTED]");
  });
});
