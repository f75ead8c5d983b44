import { describe, expect, it } from "vitest";
import { refFromIdentifier, xcodeIdentifier } from "./test-identifiers.ts";

describe("test identifiers", () => {
  it("turns xcodebuild's Target/Class/method into classname and name, and back", () => {
    const ref = refFromIdentifier("AppUITests/LoginTests/testSignsIn()");
    expect(ref).toEqual({ classname: "AppUITests.LoginTests", name: "testSignsIn" });
    expect(xcodeIdentifier(ref as NonNullable<typeof ref>)).toBe("AppUITests/LoginTests/testSignsIn");
  });

  it("is null for a bundle or class row", () => {
    expect(refFromIdentifier("AppUITests")).toBeNull();
    expect(refFromIdentifier("AppUITests/LoginTests")).toBeNull();
    expect(refFromIdentifier("AppUITests//testX")).toBeNull();
  });
});
