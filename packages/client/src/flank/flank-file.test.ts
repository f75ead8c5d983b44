import { describe, expect, it } from "vitest";
import { convertFlankFile } from "./convert.ts";
import { FlankFileError, formatFlankIssue } from "./flank-file.ts";

/** The error lines `testbay flank convert` prints for a file, or a failure when it was accepted. */
function errors(text: string): string[] {
  try {
    convertFlankFile(text, "flank.yml", "flank:flank.yml");
  } catch (error) {
    if (error instanceof FlankFileError)
      return error.issues.map((issue) => formatFlankIssue("flank.yml", issue));
    throw error;
  }
  throw new Error("the file was accepted");
}

const base = "gcloud:\n  app: app.apk\n  test: app-androidTest.apk\n";

describe("keys outside Flank's configuration", () => {
  it("names a mistyped key at its line and column with the closest documented key", () => {
    expect(errors(`${base}flank:\n  max-test-shard: 4\n`)).toEqual([
      "flank.yml:5:3: flank.max-test-shard is not a key of Flank's configuration: did you mean max-test-shards? (docs/flank.md lists every key)",
    ]);
  });

  it("reports every unknown key at once, top-level sections too", () => {
    expect(errors(`gclod:\n  app: a.apk\n${base}  use-orchestrater: true\n`)).toEqual([
      "flank.yml:1:1: gclod is not a section of a flank file (gcloud: and flank: are): did you mean gcloud?",
      "flank.yml:6:3: gcloud.use-orchestrater is not a key of Flank's configuration: did you mean use-orchestrator? (docs/flank.md lists every key)",
    ]);
  });

  it("says when a key is in the other section", () => {
    expect(errors(`${base}  max-test-shards: 3\n`)).toEqual([
      "flank.yml:4:3: gcloud.max-test-shards is not a key of gcloud: it belongs in flank:",
    ]);
  });

  it("names a device dimension typo", () => {
    expect(errors(`${base}  device:\n    - model: Pixel2\n      versoin: 30\n`)).toEqual([
      "flank.yml:6:7: gcloud.device[0].versoin is not a device dimension (model, version, locale, orientation): did you mean version?",
    ]);
  });

  it("says an iOS flank file is not run, rather than guessing a typo", () => {
    expect(errors("gcloud:\n  test: t.zip\n  xctestrun-file: a.xctestrun\n")[0]).toBe(
      "flank.yml:3:3: gcloud.xctestrun-file belongs to iOS flank files (flank ios run): testbay flank runs Android flank files (flank android run)",
    );
  });

  it("refuses YAML that does not parse, at its line", () => {
    expect(errors("gcloud:\n  app: [a\n")[0]).toMatch(/^flank\.yml:\d+:\d+: not valid YAML: /);
  });
});

describe("values Testbay cannot run", () => {
  it("refuses testFile targets and names the form to use", () => {
    expect(errors(`${base}  test-targets:\n    - testFile /sdcard/tests.txt\n`)).toEqual([
      "flank.yml:5:7: gcloud.test-targets[0] starts with testFile: Testbay writes -e testFile itself to give each shard its list: name the tests with class a.B#m",
    ]);
  });

  it("refuses a filter given as an environment variable, pointing at test-targets", () => {
    expect(errors(`${base}  environment-variables:\n    package: com.example\n`)).toEqual([
      'flank.yml:5:14: gcloud.environment-variables.package is a test filter: write it in gcloud.test-targets ("package com.example")',
    ]);
  });

  it("refuses Cloud Storage paths and a missing test APK", () => {
    expect(errors("gcloud:\n  app: gs://bucket/app.apk\n")).toEqual([
      "flank.yml:1:1: gcloud.test is missing: it names the instrumentation test APK (app-debug-androidTest.apk)",
      "flank.yml:2:8: gcloud.app gs://bucket/app.apk: Cloud Storage is not read: download it first (gsutil cp gs://bucket/app.apk .) and name the local file",
    ]);
  });

  it("refuses a relative other-files device path", () => {
    expect(errors(`${base}  other-files:\n    sdcard/data.json: fixtures/data.json\n`)).toEqual([
      "flank.yml:5:23: gcloud.other-files: the device path sdcard/data.json must be absolute (e.g. /sdcard/sdcard/data.json)",
    ]);
  });
});

describe("the mapping", () => {
  it("turns other-files and additional-apks into version files, push and additional_apks", () => {
    const conversion = convertFlankFile(
      `${base}  other-files:\n    /sdcard/fixtures/users.json: test data/users.json\n    /data/local/tmp/users.json: other/users.json\n  additional-apks: [helper.apk]\n`,
      "flank.yml",
      "flank:flank.yml",
    );
    expect(conversion.files).toEqual([
      { name: "helper.apk", path: "helper.apk", key: "gcloud.additional-apks[0]" },
      {
        name: "users.json",
        path: "test data/users.json",
        key: "gcloud.other-files[/sdcard/fixtures/users.json]",
      },
      {
        name: "2-users.json",
        path: "other/users.json",
        key: "gcloud.other-files[/data/local/tmp/users.json]",
      },
    ]);
    expect(conversion.plan.steps[0]).toMatchObject({
      additional_apks: ["helper.apk"],
      push: [
        { file: "users.json", to: "/sdcard/fixtures/users.json" },
        { file: "2-users.json", to: "/data/local/tmp/users.json" },
      ],
    });
  });

  it("reads renamed keys under Flank's current names, saying so", () => {
    const conversion = convertFlankFile(
      `${base}flank:\n  testShards: 3\n  repeatTests: 2\n`,
      "flank.yml",
      "p",
    );
    expect(conversion.plan.steps[0]).toMatchObject({ shards: "auto", max_shards: 3 });
    expect(conversion.runs).toBe(2);
    expect(conversion.warnings.map((w) => w.message)).toEqual([
      "flank.testShards is read as flank.max-test-shards (Flank's current name for it)",
      "flank.repeatTests is read as flank.num-test-runs (Flank's current name for it)",
    ]);
  });

  it("uses the orchestrator when the file does not say, as Flank does", () => {
    expect(convertFlankFile(base, "flank.yml", "p").plan.steps[0].use_orchestrator).toBe(true);
  });
});
