import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parsePlansFile } from "../plans/parse.ts";
import { convertFlankFile } from "./convert.ts";
import { FlankFileError, formatFlankIssue } from "./flank-file.ts";
import { planYaml } from "./plan-yaml.ts";

/**
 * Every real flank.yml under fixtures/ (fixtures/SOURCES.md) converted as `testbay flank convert` does: the
 * plan and each warning, or the errors that stop the run, kept as a readable snapshot per file.
 */
const dir = new URL("./fixtures/", import.meta.url);
const fixtures = readdirSync(dir).filter((name) => name.endsWith(".yml"));

function converted(name: string): string {
  const text = readFileSync(new URL(name, dir), "utf8");
  try {
    const conversion = convertFlankFile(text, name, `flank:${name}`);
    const { plan, warnings, ...run } = conversion;
    return [
      `plan: ${JSON.stringify(plan, null, 2)}`,
      `run: ${JSON.stringify(run, null, 2)}`,
      "warnings:",
      ...warnings.map((warning) => `  ${formatFlankIssue(name, warning)}`),
      "",
    ].join("\n");
  } catch (error) {
    if (!(error instanceof FlankFileError)) throw error;
    return [
      "errors (exit 2, nothing sent):",
      ...error.issues.map((i) => `  ${formatFlankIssue(name, i)}`),
      "",
    ].join("\n");
  }
}

describe("flank convert of real flank files", () => {
  it("has at least ten of them", () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(10);
  });

  it.each(fixtures)("%s", async (name) => {
    await expect(converted(name)).toMatchFileSnapshot(`./fixtures/__snapshots__/${name}.txt`);
  });

  it.each(fixtures)("%s converts to a plan testbay.yaml's schema accepts (or is refused)", (name) => {
    const text = readFileSync(new URL(name, dir), "utf8");
    let plan: ReturnType<typeof convertFlankFile>["plan"];
    try {
      plan = convertFlankFile(text, name, `flank:${name}`).plan;
    } catch (error) {
      expect(error).toBeInstanceOf(FlankFileError);
      return;
    }
    const parsed = parsePlansFile(planYaml(plan, "com.example.app"), "testbay.yaml");
    expect(parsed.content.plans[0]?.name).toBe(`flank:${name}`);
  });
});
