import { describe, expect, it } from "vitest";
import { testIdentifierProblem } from "./xcode-test-identifier.ts";

describe("xcuitest identifiers", () => {
  it("takes a target, a class in it and a method in that, as xcodebuild -only-testing does", () => {
    for (const identifier of [
      "ShopUITests",
      "Shop UITests",
      "Shop-UITests.iOS",
      "ShopUITests/CheckoutTests",
      "ShopUITests/CheckoutTests/testPayWithCard",
      "ShopUITests/CheckoutTests/testPayWithCard()",
      "ShopUITests/CardSuite/checkout(card:amount:)",
      "ÜberTests/ÄpfelTests/test_ß",
    ]) {
      expect(testIdentifierProblem(identifier), identifier).toBeNull();
    }
  });

  it("says which part is wrong", () => {
    expect(testIdentifierProblem("")).toContain("empty test target");
    expect(testIdentifierProblem("ShopUITests/")).toContain("empty class");
    expect(testIdentifierProblem("ShopUITests/CheckoutTests/")).toContain("empty method");
    expect(testIdentifierProblem("A/B/c/d")).toContain("has 4 parts");
    expect(testIdentifierProblem("ShopUITests/CheckoutTests.testPay")).toBe(
      '"CheckoutTests.testPay" is not a class name',
    );
    expect(testIdentifierProblem("ShopUITests /Checkout")).toBe('"ShopUITests " is not a test target name');
    expect(testIdentifierProblem("-only-testing:ShopUITests")).toContain("is not a test target name");
    expect(testIdentifierProblem("ShopUITests/1Tests")).toContain("is not a class name");
    expect(testIdentifierProblem("ShopUITests/Tests/test Pay")).toContain("is not a method name");
    expect(testIdentifierProblem("ShopUITests/Tests/testPay(")).toContain("is not a method name");
  });
});
