import { describe, expect, it } from "vitest";
import { isPublicAddress, literalRefusal } from "./address-guard.ts";

describe("isPublicAddress", () => {
  it.each([
    "127.0.0.1",
    "10.0.0.1",
    "172.16.5.4",
    "192.168.1.1",
    "169.254.169.254",
    "0.0.0.0",
    "100.64.0.1",
    "::1",
    "::",
    "fe80::1",
    "fd00::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    // IPv4-compatible IPv6 (::/96): 127.0.0.1 and a public address written that way are both refused.
    "::7f00:1",
    "::127.0.0.1",
    "::808:808",
    "224.0.0.1",
    "not-an-address",
  ])("refuses %s", (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])("allows %s", (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});

describe("literalRefusal", () => {
  it.each([
    "http://127.0.0.1:8080/hook",
    "http://169.254.169.254/latest/meta-data/",
    "http://localhost/hook",
    "http://api.localhost/hook",
    "http://[::1]/hook",
    "http://[::ffff:7f00:1]/hook",
    "http://[::7f00:1]/hook",
    "http://[::127.0.0.1]/hook",
    // The URL parser writes these short and numeric forms as the dotted quad before the guard sees them.
    "http://127.1/hook",
    "http://2130706433/hook",
    "http://0x7f.0.0.1/hook",
    "http://10.0.0.1/hook",
  ])("refuses %s when it is given", (url) => {
    expect(literalRefusal(new URL(url))).toEqual(expect.any(String));
  });

  it("leaves names to be judged when they are resolved", () => {
    expect(literalRefusal(new URL("https://hooks.example.com/x"))).toBeUndefined();
    expect(literalRefusal(new URL("https://8.8.8.8/x"))).toBeUndefined();
  });
});
