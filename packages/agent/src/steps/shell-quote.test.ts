import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { shellQuote } from "./shell-quote.ts";

describe("shellQuote", () => {
  it.each([
    "plain",
    "it's",
    "$HOME `id` $(id) ; rm -rf / && echo",
    "'''",
    'a "double" \\ back',
    "new\nline",
    "",
  ])("a POSIX shell reads %j back unchanged", (word) => {
    expect(execFileSync("/bin/sh", ["-c", `printf %s ${shellQuote(word)}`], { encoding: "utf8" })).toBe(word);
  });
});
