import { describe, expect, it } from "vitest";
import { ApiProblem } from "../../api/problem.ts";
import { fieldErrors, fieldOf } from "./field-errors.ts";

describe("where the API's validation messages show in the plan form", () => {
  it("maps each JSON Pointer to its field", () => {
    expect(fieldOf("/timeout_seconds")).toEqual({ field: "timeout_seconds" });
    expect(fieldOf("/devices/1/platform")).toEqual({ field: "devices.1.platform" });
    expect(fieldOf("/devices/0")).toEqual({ field: "devices", prefix: "device 1" });
    expect(fieldOf("/steps")).toEqual({ field: "steps" });
    expect(fieldOf("/steps/0/expect/max_size_mb")).toEqual({
      field: "steps",
      prefix: "step 1 › expect › max_size_mb",
    });
    expect(fieldOf("/color")).toBeUndefined();
    expect(fieldOf("/")).toBeUndefined();
  });

  it("sorts a refusal's errors to fields, and keeps the rest for the top of the form", () => {
    const problem = new ApiProblem(400, {
      detail: "The request is invalid.",
      errors: [
        { path: "/timeout_seconds", message: "must be >= 30" },
        { path: "/steps/0/type", message: '"teleport" is not a known type' },
        { path: "/color", message: "is not a known field" },
      ],
    });
    expect(fieldErrors(problem)).toEqual({
      fields: {
        timeout_seconds: ["must be at least 30"],
        steps: ['step 1 › type: "teleport" is not a known type'],
      },
      general: ["/color is not a known field"],
    });
  });

  it("says the server's messages in people's words, the plan form's own ones first", () => {
    const problem = new ApiProblem(400, {
      detail: "The request is invalid.",
      errors: [
        { path: "/name", message: "must NOT have fewer than 1 characters" },
        { path: "/steps/0/expect/max_size_mb", message: "must be >= 1" },
        { path: "/tags", message: "must NOT have fewer than 1 characters" },
      ],
    });
    expect(fieldErrors(problem)).toEqual({
      fields: {
        name: ["Give the plan a name"],
        steps: ["step 1 › expect › max_size_mb: must be at least 1"],
      },
      general: ["/tags must not be empty"],
    });
  });

  it("shows any other failure at the top", () => {
    expect(fieldErrors(new ApiProblem(404, { detail: "There is no app x." }))).toEqual({
      fields: {},
      general: ["There is no app x."],
    });
    expect(fieldErrors(undefined)).toEqual({ fields: {}, general: [] });
  });
});
