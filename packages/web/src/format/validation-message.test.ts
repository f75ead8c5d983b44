import { describe, expect, it } from "vitest";
import { humanMessage } from "./validation-message.ts";

describe("the server's validation messages as a form says them", () => {
  it("uses a field's own words for a message first", () => {
    const own = { "must NOT have fewer than 1 characters": "Give the plan a name" };
    expect(humanMessage("must NOT have fewer than 1 characters", own)).toBe("Give the plan a name");
    expect(humanMessage("must NOT have more than 200 characters", own)).toBe(
      "is too long: at most 200 characters",
    );
  });

  it("rewords Ajv's usual messages", () => {
    expect(humanMessage("must NOT have fewer than 1 characters")).toBe("must not be empty");
    expect(humanMessage("must NOT have fewer than 3 characters")).toBe("needs at least 3 characters");
    expect(humanMessage("must be >= 30")).toBe("must be at least 30");
    expect(humanMessage("must be <= 86400")).toBe("must be at most 86400");
    expect(humanMessage("must be integer")).toBe("must be a whole number");
    expect(humanMessage("must NOT have fewer than 1 items")).toBe("needs at least one item");
    expect(humanMessage("must NOT have more than 20 items")).toBe("has too many items: at most 20");
    expect(humanMessage("must NOT have duplicate items (items ## 1 and 0 are identical)")).toBe(
      "lists the same item twice",
    );
    expect(humanMessage("must be equal to one of the allowed values")).toBe(
      "is not one of the allowed values",
    );
  });

  it("keeps what it does not know, and the server's own sentences, as they came", () => {
    expect(humanMessage("is not a known field")).toBe("is not a known field");
    expect(humanMessage("must be android, the app's platform")).toBe("must be android, the app's platform");
    expect(humanMessage('must match pattern "^[a-z]+$"')).toBe('must match pattern "^[a-z]+$"');
  });
});
