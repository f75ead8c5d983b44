import { describe, expect, it } from "vitest";
import { ApiProblem } from "../../api/problem.ts";
import { fieldErrors, fieldOf } from "./field-errors.ts";
import { emptyStep, fromDraft, isFormDraft, type StepDraft, toDraft } from "./step-fields.ts";

const formValues = (draft: StepDraft) => {
  if (!isFormDraft(draft)) throw new Error(`kept as JSON: ${draft.reason}`);
  return draft.values;
};

describe("a plan's steps as the form's inputs and back", () => {
  it("shows every field of each step type, and sends back the same step", () => {
    const steps = [
      {
        type: "inspect",
        name: "Release gate",
        expect: {
          max_size_mb: 42.5,
          min_sdk_at_most: 24,
          target_sdk_at_least: 34,
          abis_include: ["arm64-v8a", "x86_64"],
          permissions_exclude: ["android.permission.READ_SMS"],
          debuggable: false,
        },
      },
      {
        type: "instrumentation",
        test_package: "com.example.basic.test",
        runner: "androidx.test.runner.AndroidJUnitRunner",
        args: { clearPackageData: "true", "listener.x": "a=b" },
        filter: {
          classes: ["com.example.LoginTest#signsIn"],
          not_annotations: ["com.example.Flaky"],
          size: "small",
        },
        record_video: "always",
        logcat: false,
        screenshot_on_failure: true,
        clear_package_data: true,
        shards: 3,
        sharding: "uniform",
        retry_failed_tests: 2,
        timeout_seconds: 900,
      },
      {
        type: "xcuitest",
        only_testing: ["ShopUITests/CheckoutTests", "ShopUITests/LoginTests/testSignIn"],
        skip_testing: ["ShopUITests/CheckoutTests/testFlaky"],
        logcat: true,
        clear_package_data: true,
        shards: 2,
        retry_failed_tests: 1,
      },
      {
        type: "maestro",
        flows: ["appId: x\n---\n- launchApp\n", "- tapOn: OK"],
        record_video: "never",
        retry_failed_tests: 1,
      },
      {
        type: "shell",
        name: "Lint",
        run: "./gradlew lint\necho done\n",
        junit: "build/**/*.xml",
        timeout_seconds: 60,
      },
    ];
    for (const step of steps) {
      const draft = toDraft(step);
      formValues(draft);
      expect(fromDraft(draft)).toEqual(step);
    }
    const inspect = formValues(toDraft(steps[0]));
    expect(inspect["expect.min_sdk_at_most"]).toBe("24");
    expect(inspect["expect.abis_include"]).toBe("arm64-v8a\nx86_64");
    expect(inspect["expect.debuggable"]).toBe("no");
    const instrumentation = formValues(toDraft(steps[1]));
    expect(instrumentation.args).toBe("clearPackageData=true\nlistener.x=a=b");
    expect(instrumentation["filter.size"]).toBe("small");
    expect(instrumentation.logcat).toBe("no");
    expect(instrumentation.runner).toBe("androidx.test.runner.AndroidJUnitRunner");
    expect(instrumentation).toMatchObject({ shards: "3", sharding: "uniform", retry_failed_tests: "2" });
    const xcuitest = formValues(toDraft(steps[2]));
    expect(xcuitest.only_testing).toBe("ShopUITests/CheckoutTests\nShopUITests/LoginTests/testSignIn");
    expect(xcuitest).toMatchObject({ logcat: "yes", clear_package_data: "yes", shards: "2" });
    expect(formValues(toDraft(steps[3]))).toMatchObject({
      flows: ["appId: x\n---\n- launchApp\n", "- tapOn: OK"],
    });
  });

  it("leaves out what is empty, and sends numbers as typed when they do not read as numbers", () => {
    const draft = emptyStep("instrumentation");
    expect(fromDraft(draft)).toEqual({ type: "instrumentation" });
    const inspect = emptyStep("inspect");
    expect(fromDraft(inspect)).toEqual({ type: "inspect", expect: {} });
    const values = formValues(inspect);
    values["expect.min_sdk_at_most"] = " 21 ";
    values["expect.max_size_mb"] = "lots";
    values["expect.permissions_exclude"] = "a\n\n  b  \n";
    values.name = "  ";
    expect(fromDraft(inspect)).toEqual({
      type: "inspect",
      expect: { min_sdk_at_most: 21, max_size_mb: "lots", permissions_exclude: ["a", "b"] },
    });
    expect(fromDraft(emptyStep("xcuitest"))).toEqual({ type: "xcuitest" });
    const maestro = emptyStep("maestro");
    expect(fromDraft(maestro)).toEqual({ type: "maestro" });
  });

  it("keeps as JSON, and says why, a step the form cannot show exactly", () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ type: "espresso", only_testing: ["A/b"] }, /no fields for steps of type "espresso"/],
      [{ type: "instrumentation", shard_by: "size" }, /fields the form does not edit \(shard_by\)/],
      [{ type: "maestro", flows: ["- launchApp"], shards: "3" }, /cannot show this step's shards/],
      [{ type: "inspect", expect: { debuggable: false, colour: "red" } }, /\(expect\.colour\)/],
      [{ type: "inspect", expect: { debuggable: "no" } }, /cannot show this step's expect\.debuggable/],
      [{ type: "instrumentation", args: { a: "line\nbreak" } }, /cannot show this step exactly/],
      ["inspect", /not a JSON object/],
    ];
    for (const [step, reason] of cases) {
      const draft = toDraft(step);
      expect(isFormDraft(draft), JSON.stringify(step)).toBe(false);
      if (isFormDraft(draft)) continue;
      expect(draft.reason).toMatch(reason);
      expect(JSON.parse(draft.json)).toEqual(step);
      expect(fromDraft(draft)).toEqual(typeof step === "object" ? step : undefined);
    }
  });
});

describe("where the API's messages about steps show in the form", () => {
  const steps = [
    toDraft({ type: "inspect", expect: { debuggable: false } }),
    toDraft({ type: "instrumentation", filter: { classes: ["A"] } }),
    toDraft({ type: "maestro", flows: ["a", "b"] }),
    toDraft({ type: "xcuitest" }),
  ];

  it("maps each step's JSON Pointer to its input, or to the step as a whole", () => {
    expect(fieldOf("/steps/0/expect/min_sdk_at_most", steps)).toEqual({
      field: "steps.0.expect.min_sdk_at_most",
    });
    expect(fieldOf("/steps/0/expect", steps)).toEqual({ field: "steps.0", prefix: "expect" });
    expect(fieldOf("/steps/0/expect/abis_include/2", steps)).toEqual({
      field: "steps.0.expect.abis_include",
      prefix: "entry 3",
    });
    expect(fieldOf("/steps/1/filter/classes/0", steps)).toEqual({
      field: "steps.1.filter.classes",
      prefix: "entry 1",
    });
    expect(fieldOf("/steps/1/args", steps)).toEqual({ field: "steps.1.args" });
    expect(fieldOf("/steps/1/shards", steps)).toEqual({ field: "steps.1.shards" });
    expect(fieldOf("/steps/2/retry_failed_tests", steps)).toEqual({ field: "steps.2.retry_failed_tests" });
    expect(fieldOf("/steps/1/type", steps)).toEqual({ field: "steps.1", prefix: "type" });
    expect(fieldOf("/steps/2/flows/1", steps)).toEqual({ field: "steps.2.flows.1" });
    expect(fieldOf("/steps/2/flows", steps)).toEqual({ field: "steps.2.flows" });
    expect(fieldOf("/steps/3/only_testing", steps)).toEqual({ field: "steps.3.only_testing" });
    expect(fieldOf("/steps/3/skip_testing/1", steps)).toEqual({
      field: "steps.3.skip_testing",
      prefix: "entry 2",
    });
    // A step the form no longer has, or steps edited as one JSON list: at the steps as a whole.
    expect(fieldOf("/steps/7/name", steps)).toEqual({ field: "steps", prefix: "step 8 › name" });
    expect(fieldOf("/steps/0/name")).toEqual({ field: "steps", prefix: "step 1 › name" });
  });

  it("sorts a refusal's step errors to the inputs", () => {
    const problem = new ApiProblem(400, {
      errors: [
        { path: "/steps/0/expect/min_sdk_at_most", message: "must be >= 1" },
        { path: "/steps/1/type", message: "instrumentation steps are for Android apps" },
        { path: "/steps/1/retry_failed_tests", message: "must be <= 5" },
      ],
    });
    expect(fieldErrors(problem, steps)).toEqual({
      fields: {
        "steps.0.expect.min_sdk_at_most": ["must be at least 1"],
        "steps.1": ["type: instrumentation steps are for Android apps"],
        "steps.1.retry_failed_tests": ["must be at most 5"],
      },
      general: [],
    });
  });
});
