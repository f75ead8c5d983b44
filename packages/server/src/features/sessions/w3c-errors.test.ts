import { describe, expect, it } from "vitest";
import { type W3cErrorCode, WebDriverError, w3cErrorAnswer, w3cErrorStatus } from "./w3c-errors.ts";

describe("W3C WebDriver errors", () => {
  it("answers each code with the status of the W3C error table", () => {
    // https://w3c.github.io/webdriver/#errors, the rows Testbay answers with.
    const specTable: Array<[W3cErrorCode, number]> = [
      ["invalid argument", 400],
      ["invalid session id", 404],
      ["unknown command", 404],
      ["unknown method", 405],
      ["session not created", 500],
      ["timeout", 500],
      ["unknown error", 500],
      ["unsupported operation", 500],
    ];
    expect(Object.keys(w3cErrorStatus).sort()).toEqual(specTable.map(([code]) => code).sort());
    for (const [code, status] of specTable) expect(w3cErrorAnswer(code, "").status).toBe(status);
  });

  it("builds the body WebDriver clients read: value.error, value.message and an empty stacktrace", () => {
    expect(w3cErrorAnswer("invalid session id", "The session was deleted")).toEqual({
      status: 404,
      body: { value: { error: "invalid session id", message: "The session was deleted", stacktrace: "" } },
    });
  });

  it("carries its code, status and answer on a thrown WebDriverError", () => {
    const error = new WebDriverError("unknown method", "GET /wd/hub/session takes POST only");
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toBe("GET /wd/hub/session takes POST only");
    expect(error.status).toBe(405);
    expect(error.answer()).toEqual(w3cErrorAnswer("unknown method", "GET /wd/hub/session takes POST only"));
  });
});
