import { describe, expect, it } from "vitest";
import { generatePassword, passwordProblem } from "./passwords.ts";

describe("passwords", () => {
  it("generates long, URL-safe, different passwords that pass the policy", () => {
    const passwords = new Set(Array.from({ length: 50 }, generatePassword));
    expect(passwords.size).toBe(50);
    for (const password of passwords) {
      expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
      expect(passwordProblem(password)).toBeUndefined();
    }
  });

  it("refuses passwords shorter than 12 characters or absurdly long", () => {
    expect(passwordProblem("elevenchars")).toBe("must be at least 12 characters long");
    expect(passwordProblem("twelve chars")).toBeUndefined();
    expect(passwordProblem("x".repeat(1025))).toBe("must be at most 1024 characters long");
  });
});
