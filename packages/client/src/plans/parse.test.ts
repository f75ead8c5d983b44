import { describe, expect, it } from "vitest";
import { formatIssue, PlansFileError, parsePlansFile } from "./parse.ts";

/** The problems of a file, as the lines apply prints them. */
function problems(text: string): string[] {
  try {
    parsePlansFile(text, "testbay.yaml");
  } catch (error) {
    if (error instanceof PlansFileError) return error.issues.map((i) => formatIssue("testbay.yaml", i));
    throw error;
  }
  throw new Error("the file was accepted");
}

const valid = `# yaml-language-server: $schema=http://localhost/downloads/testbay.schema.json
app: com.example.shop
plans:
  - name: smoke
    devices: [{platform: android, model: Pixel 7}]
    steps:
      - type: inspect
        expect: {debuggable: false}
  - name: nightly
    steps:
      - type: maestro
        flows: ["appId: com.example.shop"]
        record_video: always
    timeout_seconds: 3600
`;

describe("parsePlansFile", () => {
  it("reads a valid file, and finds its nodes by JSON Pointer", () => {
    const parsed = parsePlansFile(valid, "testbay.yaml");
    expect(parsed.content.app).toBe("com.example.shop");
    expect(parsed.content.plans.map((p) => p.name)).toEqual(["smoke", "nightly"]);
    expect(parsed.positionOf("/plans/0/devices/0/platform")).toEqual({ line: 5, col: 26 });
    expect(parsed.positionOf("/plans/1/timeout_seconds")).toEqual({ line: 14, col: 22 });
  });

  it("points at an unknown key in a step, naming the keys there are", () => {
    const text = valid.replace(
      "        expect: {debuggable: false}\n",
      "        expect: {debuggable: false}\n        colour: red\n",
    );
    expect(problems(text)).toEqual([
      "testbay.yaml:9:9: plans[0].steps[0].colour is not a known key; the keys here are type, name, expect",
    ]);
  });

  it("says which values an enum allows, at the value", () => {
    expect(problems(valid.replace("record_video: always", "record_video: sometimes"))).toEqual([
      "testbay.yaml:13:23: plans[1].steps[0].record_video must be one of never, on_failure, always",
    ]);
  });

  it("reports missing steps at the plan's map", () => {
    const text = "app: com.example.shop\nplans:\n  - name: smoke\n    timeout_seconds: 60\n";
    expect(problems(text)).toEqual(['testbay.yaml:3:5: plans[0] must have "steps"']);
  });

  it("names the step types when a step's type is unknown, without oneOf jargon", () => {
    const text =
      "app: com.example.shop\nplans:\n  - name: smoke\n    steps:\n      - type: espresso\n        run: x\n";
    const lines = problems(text);
    expect(lines).toEqual([
      "testbay.yaml:5:15: plans[0].steps[0].type must be one of inspect, shell, instrumentation, xcuitest, maestro",
    ]);
    expect(lines.join("\n")).not.toMatch(/oneOf|schema/);
  });

  it("reports YAML syntax errors at their line", () => {
    expect(problems("app: com.example.shop\nplans:\n  - name: [smoke\n")).toEqual([
      expect.stringMatching(/^testbay\.yaml:4:1: invalid YAML: .*\]/),
    ]);
    expect(problems("app: a\napp: b\nplans: []\n")).toEqual([
      "testbay.yaml:2:1: invalid YAML: Map keys must be unique",
    ]);
  });

  it("refuses the same plan name twice, at the second one", () => {
    const text = `${valid}  - name: smoke\n    steps: [{type: shell, run: "true"}]\n`;
    expect(problems(text)).toEqual([
      'testbay.yaml:15:11: plans[2].name "smoke" is the name of plans[0] (line 4) too: plans are matched by name, so names must be unique in the file',
    ]);
  });

  it("lists every problem, in file order", () => {
    const text = [
      "app: com.example.shop",
      "plans:",
      "  - name: smoke",
      "    max_attempts: 5",
      "    steps:",
      "      - type: shell",
      "  - name: ''",
      "    steps: []",
      "colour: red",
      "",
    ].join("\n");
    expect(problems(text)).toEqual([
      "testbay.yaml:4:19: plans[0].max_attempts must be 3 or less",
      'testbay.yaml:6:9: plans[0].steps[0] must have "run"',
      "testbay.yaml:7:11: plans[1].name must not be empty",
      "testbay.yaml:8:12: plans[1].steps must have at least 1 entry",
      "testbay.yaml:9:1: colour is not a known key; the keys here are app, plans",
    ]);
  });

  it("says what an empty file lacks", () => {
    expect(problems("")).toEqual(["testbay.yaml:1:1: the file must be a map (key: value), not empty"]);
  });
});
