import { describe, expect, it } from "vitest";
import { commandName, displayPath, formatOffset } from "./command-words.ts";

describe("how the session page says a command", () => {
  it("gives its time after the session's start to the millisecond", () => {
    expect(formatOffset(0)).toBe("+0:00.000");
    expect(formatOffset(4_210)).toBe("+0:04.210");
    expect(formatOffset(723_005)).toBe("+12:03.005");
    expect(formatOffset(3_723_400)).toBe("+1:02:03.400");
    // A command's host time before the step's reported start (the clocks' grain) is the start.
    expect(formatOffset(-12)).toBe("+0:00.000");
  });

  it("names W3C commands by method and path, whatever the element ID", () => {
    expect(commandName({ method: "POST", path: "/element" })).toBe("Find element");
    expect(commandName({ method: "POST", path: "/element/4f0c-9a/click" })).toBe("Element click");
    expect(commandName({ method: "GET", path: "/element/1/attribute/clicks" })).toBe("Get element attribute");
    expect(commandName({ method: "DELETE", path: "" })).toBe("Delete session");
    expect(commandName({ method: "GET", path: "/element" })).toBeUndefined();
    expect(commandName({ method: "POST", path: "/appium/device/shake" })).toBeUndefined();
  });

  it("shows the session's own path as /", () => {
    expect(displayPath("")).toBe("/");
    expect(displayPath("/source")).toBe("/source");
  });
});
