import { describe, expect, it } from "vitest";
import { splitAlwaysRun } from "./always-run.ts";

const t = (classname: string, name: string) => ({ classname, name });

describe("splitAlwaysRun", () => {
  it("takes whole classes and single methods (every index of a parameterized one) out of the shared set", () => {
    const listed = [
      t("a.Setup", "logsIn"),
      t("a.Cart", "adds"),
      t("a.Cart", "pays[0]"),
      t("a.Cart", "pays[1]"),
      t("a.Other", "x"),
    ];
    expect(splitAlwaysRun(listed, ["a.Setup", "a.Cart#pays"])).toEqual({
      first: [t("a.Setup", "logsIn"), t("a.Cart", "pays[0]"), t("a.Cart", "pays[1]")],
      rest: [t("a.Cart", "adds"), t("a.Other", "x")],
    });
  });

  it("leaves the listing whole without always_run", () => {
    expect(splitAlwaysRun([t("a.B", "c")], [])).toEqual({ first: [], rest: [t("a.B", "c")] });
  });
});
