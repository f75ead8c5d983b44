import { describe, expect, it } from "vitest";
import { convertFlankFile } from "./convert.ts";
import { formatFlankIssue } from "./flank-file.ts";

const base = "gcloud:\n  app: app.apk\n  test: app-androidTest.apk\n";
const convert = (more: string) => convertFlankFile(`${base}${more}`, "flank.yml", "flank:flank.yml");
const step = (more: string) => convert(more).plan.steps[0];

describe("sharding keys", () => {
  it("max-test-shards -1 (one shard per test in Flank) is auto with Testbay's most, 50", () => {
    expect(step("flank:\n  max-test-shards: -1\n")).toMatchObject({ shards: "auto", max_shards: 50 });
  });

  it("max-test-shards with shard-time in seconds gives the target per shard in minutes", () => {
    expect(step("flank:\n  max-test-shards: 10\n  shard-time: 180\n")).toMatchObject({
      shards: "auto",
      max_shards: 10,
      target_minutes: 3,
    });
  });

  it("max-test-shards 1 is Flank's default: one shard, nothing written", () => {
    expect(step("flank:\n  max-test-shards: 1\n").shards).toBeUndefined();
  });

  it("num-uniform-shards splits by count; disable-sharding wins over every other key", () => {
    expect(step("  num-uniform-shards: 5\n")).toMatchObject({ shards: 5, sharding: "uniform" });
    expect(
      step("  num-uniform-shards: 5\nflank:\n  disable-sharding: true\n  max-test-shards: 9\n"),
    ).toMatchObject({
      shards: 1,
    });
  });
});

describe("test keys", () => {
  it("splits comma-joined targets and keeps each filter kind apart", () => {
    expect(
      step(
        "  test-targets:\n    - class a.B#one,a.C\n    - notPackage a.slow\n    - notAnnotation a.Flaky\n    - size large\n",
      ).filter,
    ).toEqual({
      classes: ["a.B#one", "a.C"],
      not_packages: ["a.slow"],
      not_annotations: ["a.Flaky"],
      size: "large",
    });
  });

  it("test-targets-always-run as Flank writes them (class a.B#m) become always_run", () => {
    expect(step("flank:\n  test-targets-always-run:\n    - class a.Login#grant\n").always_run).toEqual([
      "a.Login#grant",
    ]);
  });

  it("coverage in environment-variables is the step's coverage, the rest stays -e", () => {
    const conversion = convert(
      "  environment-variables:\n    coverage: true\n    coverageFile: /sdcard/c.ec\n    clearPackageData: true\n",
    );
    expect(conversion.plan.steps[0]).toMatchObject({
      coverage: true,
      environment: { clearPackageData: "true" },
    });
    expect(conversion.warnings.map((w) => formatFlankIssue("flank.yml", w))).toEqual([
      "flank.yml:6:5: gcloud.environment-variables.coverageFile is not used: with coverage, Testbay writes each shard's file itself and keeps it as the artifact coverage/<shard>/<file>",
    ]);
  });

  it("num-flaky-test-attempts above Testbay's 5 is 5, with a warning", () => {
    const conversion = convert("  num-flaky-test-attempts: 10\n");
    expect(conversion.plan.steps[0].retry_failed_tests).toBe(5);
    expect(conversion.warnings[0]?.message).toBe(
      "gcloud.num-flaky-test-attempts 10: Testbay reruns a failed test at most 5 times",
    );
  });
});

describe("run keys", () => {
  it("reads timeout, run-timeout, num-test-runs, local-result-dir and ignore-failed-tests", () => {
    const conversion = convert(
      "  timeout: 1h\nflank:\n  run-timeout: 90m\n  num-test-runs: 3\n  local-result-dir: out\n  ignore-failed-tests: true\n",
    );
    expect(conversion.plan.timeout_seconds).toBe(3600);
    expect(conversion).toMatchObject({
      runTimeoutSeconds: 5400,
      runs: 3,
      localResultDir: "out",
      ignoreFailedTests: true,
    });
  });

  it("no device is any Android device; each device entry keeps locale and orientation", () => {
    expect(convert("").plan.devices).toEqual([{ platform: "android" }]);
    expect(
      convert("  device:\n    - model: Pixel 7\n      version: '30'\n      locale: de_DE\n").plan.devices,
    ).toEqual([
      { platform: "android", model: "Pixel 7", api_level_min: 30, api_level_max: 30, locale: "de_DE" },
    ]);
  });

  it("reads Test Lab's model IDs: a virtual device is any emulator, a Pixel's codename its model, one warning each", () => {
    const conversion = convert(
      "  device:\n    - model: MediumPhone.arm\n      version: 33\n    - model: redfin\n      version: 30\n    - model: HWCOR\n",
    );
    expect(conversion.plan.devices).toEqual([
      { platform: "android", emulator: true, api_level_min: 33, api_level_max: 33 },
      { platform: "android", model: "Pixel 5", api_level_min: 30, api_level_max: 30 },
      { platform: "android", model: "HWCOR" },
    ]);
    expect(conversion.warnings.map((w) => formatFlankIssue("flank.yml", w))).toEqual([
      "flank.yml:5:7: gcloud.device[0].model MediumPhone.arm is a Test Lab virtual device: any emulator of API 33",
      'flank.yml:7:7: gcloud.device[1].model redfin is Test Lab\'s Pixel 5: a device whose model is "Pixel 5"',
      "flank.yml:9:7: gcloud.device[2].model HWCOR is kept as written: it must equal the model a device host reports for the phone (testbay agents lists them)",
    ]);
  });
});

describe("test targets from the environment", () => {
  it("reads a $NAME target as Flank does: the variable's comma-separated targets", () => {
    const conversion = convertFlankFile(
      `${base}  test-targets:\n    - class a.B\n    - $FROM_ENV\n`,
      "flank.yml",
      "p",
      { FROM_ENV: "class from.env.C,notAnnotation from.env.Slow" },
    );
    expect(conversion.plan.steps[0].filter).toEqual({
      classes: ["a.B", "from.env.C"],
      not_annotations: ["from.env.Slow"],
    });
  });

  it("warns about a $NAME that is not set (Flank drops it silently)", () => {
    const conversion = convert("  test-targets:\n    - $FROM_ENV\n");
    expect(conversion.plan.steps[0].filter).toBeUndefined();
    expect(conversion.warnings.map((w) => formatFlankIssue("flank.yml", w))).toEqual([
      "flank.yml:5:7: gcloud.test-targets[0] $FROM_ENV: FROM_ENV is not set, so it adds no targets (as in Flank)",
    ]);
  });
});
