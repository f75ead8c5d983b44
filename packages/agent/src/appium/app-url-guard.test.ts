import { describe, expect, it } from "vitest";
import { literalHostRefusal, nonPublicKind, resolvedHostRefusal } from "./app-url-guard.ts";

describe("nonPublicKind", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["::1", "loopback"],
    ["10.0.0.8", "private"],
    ["172.31.255.1", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "private"],
    ["fd00::1", "private"],
    ["169.254.169.254", "link-local"],
    ["fe80::1", "link-local"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["::ffff:7f00:1", "special-purpose"],
    ["224.0.0.1", "special-purpose"],
    ["2001:db8::1", "special-purpose"],
    ["not an address", "special-purpose"],
  ])("calls %s %s", (address, kind) => {
    expect(nonPublicKind(address)).toBe(kind);
  });

  it.each(["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111", "172.32.0.1"])("lets %s pass", (address) => {
    expect(nonPublicKind(address)).toBeUndefined();
  });
});

describe("literalHostRefusal", () => {
  it("refuses localhost in any spelling and leaves names to the lookup", () => {
    expect(literalHostRefusal(new URL("http://LOCALHOST./a.apk"))).toContain("agent's own host");
    expect(literalHostRefusal(new URL("http://api.localhost/a.apk"))).toContain("agent's own host");
    expect(literalHostRefusal(new URL("https://apps.example.com/a.apk"))).toBeUndefined();
  });
});

describe("resolvedHostRefusal", () => {
  const resolver = (table: Record<string, string[]>) => async (host: string) => {
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address }));
  };

  it("refuses a name with any non-public address, passes one with only public ones", async () => {
    const resolveAll = resolver({
      "apps.example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
      "mixed.example.com": ["93.184.215.14", "10.0.0.5"],
    });
    expect(await resolvedHostRefusal(new URL("https://apps.example.com/a.apk"), resolveAll)).toBeUndefined();
    expect(await resolvedHostRefusal(new URL("https://mixed.example.com/a.apk"), resolveAll)).toBe(
      "mixed.example.com resolves to 10.0.0.5, a private address, not a public one",
    );
    expect(await resolvedHostRefusal(new URL("https://gone.example.com/a.apk"), resolveAll)).toContain(
      "does not resolve",
    );
  });
});
