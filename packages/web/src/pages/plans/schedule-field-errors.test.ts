import { describe, expect, it } from "vitest";
import { ApiProblem } from "../../api/problem.ts";
import { scheduleFieldErrors } from "./schedule-field-errors.ts";

describe("scheduleFieldErrors", () => {
  it("puts the API's messages at the cron, time zone and version fields", () => {
    const refused = new ApiProblem(400, {
      detail: "The request is invalid.",
      errors: [
        { path: "/cron", in: "body", message: "is not a cron expression croner reads" },
        { path: "/timezone", in: "body", message: "must NOT have fewer than 1 characters" },
        { path: "/", in: "body", message: "must NOT have additional properties" },
      ],
    } as never);
    expect(scheduleFieldErrors(refused)).toEqual({
      fields: { cron: ["is not a cron expression croner reads"], timezone: ["must not be empty"] },
      general: ["The schedule must NOT have additional properties"],
    });
  });

  it("keeps a refusal without errors whole", () => {
    const refused = new ApiProblem(404, { detail: "There is no test plan tp_1." });
    expect(scheduleFieldErrors(refused)).toEqual({ fields: {}, general: ["There is no test plan tp_1."] });
  });
});
