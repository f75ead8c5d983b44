import { describe, expect, it } from "vitest";
import { commandFailed, parseCommandLog } from "./command-log.ts";

describe("parseCommandLog", () => {
  it("reads the agent's lines in order, and counts what is not a command", () => {
    const text = [
      '{"at":"2026-11-28T10:25:47.802Z","method":"GET","path":"/source","status":200,"ms":4.3}',
      '{"at":"2026-11-28T10:25:47.840Z","method":"POST","path":"/element","status":404,"ms":3.1}',
      "",
      '{"at":"2026-11-28T10:25:47.848Z","method":"DELETE","path":"","status":200,"ms":4.3}',
      // A log cut short by a full disk ends in half a line.
      '{"at":"2026-11-28T10:25:48.000Z","meth',
    ].join("\n");
    const log = parseCommandLog(text);
    expect(log.commands).toEqual([
      {
        index: 0,
        at: Date.parse("2026-11-28T10:25:47.802Z"),
        method: "GET",
        path: "/source",
        status: 200,
        ms: 4.3,
      },
      {
        index: 1,
        at: Date.parse("2026-11-28T10:25:47.840Z"),
        method: "POST",
        path: "/element",
        status: 404,
        ms: 3.1,
      },
      {
        index: 2,
        at: Date.parse("2026-11-28T10:25:47.848Z"),
        method: "DELETE",
        path: "",
        status: 200,
        ms: 4.3,
      },
    ]);
    expect(log.unreadable).toBe(1);
  });

  it("refuses lines whose fields are missing or of another type", () => {
    const log = parseCommandLog(
      [
        '{"at":"not a time","method":"GET","path":"/source","status":200,"ms":1}',
        '{"at":"2026-11-28T10:25:47.802Z","method":"GET","path":"/source","status":"200","ms":1}',
        "[1, 2]",
      ].join("\n"),
    );
    expect(log).toEqual({ commands: [], unreadable: 3 });
  });

  it("calls a command failed from status 400 on, as WebDriver errors are", () => {
    expect(commandFailed({ status: 200 })).toBe(false);
    expect(commandFailed({ status: 404 })).toBe(true);
    expect(commandFailed({ status: 500 })).toBe(true);
  });
});
