import { describe, expect, it } from "vitest";
import { osVersionMatches, osVersionPrefixes, osVersionPrefixShown } from "./os-version-prefix.ts";

describe("an OS version prefix (a session's appium:platformVersion)", () => {
  it("matches the device's OS version a whole component at a time", () => {
    expect(osVersionMatches("14", "14")).toBe(true);
    expect(osVersionMatches("14", "14.1")).toBe(true);
    expect(osVersionMatches("14", "14.1.2")).toBe(true);
    expect(osVersionMatches("17", "17.4")).toBe(true);
    expect(osVersionMatches("17.4", "17.4")).toBe(true);
    expect(osVersionMatches("17.4", "17.4.1")).toBe(true);
    expect(osVersionMatches("17.4.1", "17.4.1")).toBe(true);
  });

  it("does not match a version that only starts with the same characters, nor a shorter one", () => {
    expect(osVersionMatches("14", "141")).toBe(false);
    expect(osVersionMatches("1", "14.1")).toBe(false);
    expect(osVersionMatches("1", "141")).toBe(false);
    expect(osVersionMatches("17.4", "17.41")).toBe(false);
    expect(osVersionMatches("17.4", "17")).toBe(false);
    expect(osVersionMatches("17.4.1", "17.4")).toBe(false);
    expect(osVersionMatches("4", "14")).toBe(false);
  });

  it("takes a trailing dot as the start of the next component: 17. is any 17.x, not 17 itself", () => {
    expect(osVersionMatches("17.", "17.2")).toBe(true);
    expect(osVersionMatches("17.", "17.2.1")).toBe(true);
    expect(osVersionMatches("17.", "17")).toBe(false);
    expect(osVersionMatches("17.", "170")).toBe(false);
  });

  it("compares text as it is: no case folding, no padding of components", () => {
    expect(osVersionMatches("14.0", "14")).toBe(false);
    expect(osVersionMatches("Baklava", "baklava")).toBe(false);
    expect(osVersionMatches("unknown", "unknown")).toBe(true);
  });

  it("lists each prefix a version answers to once, shortest first (the claim's IN list)", () => {
    expect(osVersionPrefixes("17.4.1")).toEqual(["17", "17.", "17.4", "17.4.", "17.4.1"]);
    expect(osVersionPrefixes("14")).toEqual(["14"]);
    expect(osVersionPrefixes("")).toEqual([""]);
  });

  it("is said as the versions it picks", () => {
    expect(osVersionPrefixShown("14")).toBe("14 or 14.*");
    expect(osVersionPrefixShown("17.")).toBe("17.*");
  });
});
