import { TestbayApiError, TestbayGaveUpError, TestbayNetworkError } from "@testbay/client";
import { describe, expect, it } from "vitest";
import { credentialsRefused, refusedAtStart } from "./start-refusal.ts";

const refusal = (status: number, reason?: string) =>
  new TestbayApiError({
    status,
    problem: { code: "invalid_access_token", reason, detail: "Unknown client ID or wrong client secret." },
    method: "POST",
    path: "/oauth/token",
  });

describe("credentialsRefused: which failures at start are configuration errors (exit 2)", () => {
  it("is a 401, and not an unreachable server or a server error, which a restart may cure (exit 1)", () => {
    const unreachable = new TestbayNetworkError("POST", "/oauth/token", new Error("connect ECONNREFUSED"));
    expect(credentialsRefused(refusal(401, "invalid_client"))).toBe(true);
    expect(credentialsRefused(refusal(401, "client_disabled"))).toBe(true);
    expect(credentialsRefused(unreachable)).toBe(false);
    expect(
      credentialsRefused(new TestbayGaveUpError("POST", "/oauth/token", 6, "attempts", unreachable)),
    ).toBe(false);
    expect(credentialsRefused(refusal(503))).toBe(false);
    expect(credentialsRefused(new Error("invalid JSON"))).toBe(false);
  });
});

describe("refusedAtStart", () => {
  it("names the commands for the client it was given: rotate its secret, or create an agent client", () => {
    const text = refusedAtStart(refusal(401, "invalid_client"), "cl_01ABC");
    expect(text).toContain("testbay-server client rotate cl_01ABC");
    expect(text).toContain("testbay-server client create --org NAME --role agent");
    expect(text).not.toContain("client enable");
  });

  it("for a disabled client, the command that enables it", () => {
    const text = refusedAtStart(refusal(401, "client_disabled"), "cl_01ABC");
    expect(text).toContain("testbay-server client enable cl_01ABC");
    expect(text).not.toContain("client rotate");
  });
});
