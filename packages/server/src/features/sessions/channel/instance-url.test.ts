import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { instanceUrlOf } from "./instance-url.ts";

const bound = { address: "127.0.0.1", family: "IPv4", port: 43_210 };

describe("instanceUrlOf", () => {
  it("is TESTBAY_INSTANCE_URL when set", () => {
    expect(instanceUrlOf("http://api-2.internal:8080", "0.0.0.0", bound)).toBe("http://api-2.internal:8080");
  });

  it("is the host and the bound port otherwise", () => {
    expect(instanceUrlOf(undefined, "127.0.0.1", bound)).toBe("http://127.0.0.1:43210");
    expect(instanceUrlOf(undefined, "::1", bound)).toBe("http://[::1]:43210");
  });

  it("names the machine when the server listens on every interface", () => {
    expect(instanceUrlOf(undefined, "0.0.0.0", bound)).toBe(`http://${hostname()}:43210`);
  });

  it("is not known before the server listens", () => {
    expect(() => instanceUrlOf(undefined, "127.0.0.1", null)).toThrow(/does not listen yet/);
  });
});
