import { describe, expect, it } from "vitest";
import { cronInWords, scheduleVersionInWords } from "./cron-words.ts";

describe("cronInWords", () => {
  it.each([
    ["0 2 * * *", "Every day at 02:00"],
    ["30 6 * * 1-5", "Monday to Friday at 06:30"],
    ["0 2,14 * * *", "Every day at 02:00 and 14:00"],
    ["0 9 * * 1,4", "Mondays and Thursdays at 09:00"],
    ["0 9 * * 0", "Sundays at 09:00"],
    ["15 3 1 * *", "On the 1st of every month at 03:15"],
    ["*/15 * * * *", "Every 15 minutes"],
    ["5 * * * *", "Every hour at minute 5"],
    ["0 */4 * * *", "Every 4 hours"],
    ["*/30 * * * * *", "Every 30 seconds"],
    ["* * * * * *", "Every second"],
    ["0 0 2 * * *", "Every day at 02:00"],
  ])("reads %s as %s", (cron, words) => {
    expect(cronInWords(cron)).toBe(words);
  });

  it.each(["0 2 * 1 *", "0 2 L * *", "0 2 * * MON", "0 2 1 * 1", "nonsense", "61 2 * * *"])(
    "has no words for %s (the expression alone is shown)",
    (cron) => {
      expect(cronInWords(cron)).toBeUndefined();
    },
  );
});

describe("scheduleVersionInWords", () => {
  it("says which version runs", () => {
    expect(scheduleVersionInWords("latest")).toBe("The newest version");
    expect(scheduleVersionInWords("latest:branch=main")).toBe("The newest version of branch main");
    expect(scheduleVersionInWords("1.4.2")).toBe("Version 1.4.2");
  });
});
