import { describe, expect, it } from "vitest";
import { closestName, editDistance } from "./closest-name.ts";

describe("closest registered name", () => {
  it("counts insertions, deletions and substitutions", () => {
    expect(editDistance("com.example.basik", "com.example.basic")).toBe(1);
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("", "abc")).toBe(3);
    expect(editDistance("abc", "abc")).toBe(0);
  });

  it("suggests the nearest name only when it is close enough to be a typo", () => {
    const apps = ["com.example.basic", "com.example.shop", "org.other.app"];
    expect(closestName("com.example.basik", apps)).toBe("com.example.basic");
    expect(closestName("com.example.shopp", apps)).toBe("com.example.shop");
    expect(closestName("com.acme.payments", apps)).toBeUndefined();
    expect(closestName("a", ["b"])).toBeUndefined();
  });
});
