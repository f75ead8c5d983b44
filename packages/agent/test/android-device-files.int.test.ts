import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { call } from "../../server/test/harness.ts";
import { androidServer } from "./android-server.ts";
import type { Suite } from "./stand-ins/device-lab.ts";

// Issue 29 end to end (API.md §14): version files uploaded to a real server, a plan whose instrumentation step
// runs through AndroidX Test Orchestrator with environment variables, an additional APK, a pushed file, pulled
// directories (pull_filter), coverage, retries and two shards, a device entry with a locale and an orientation;
// real `testbay-agent` processes with --android-tools on two stand-in emulators; what each option did read back
// from the devices' call logs and from the server as a user reads it.

const TOOLS = fileURLToPath(new URL("./fixtures/tool-apks/", import.meta.url));
const TEST_PACKAGE = "com.example.basic.test";
const login = "com.example.basic.LoginTest";
const cart = "com.example.basic.CartTest";
const SERIALS = ["emulator-5554", "emulator-5556"];

const android = androidServer({ versions: ["1.0.0"] });
const { startAgent, finished } = android;

async function putVersionFile(name: string, bytes: Buffer) {
  const response = await fetch(
    `${android.server.baseUrl}/apps/com.example.basic/versions/1.0.0/files/${name}`,
    { method: "PUT", headers: { ...android.ci, "content-type": "application/octet-stream" }, body: bytes },
  );
  expect(response.status).toBe(201);
}

describe("an instrumentation plan with device files, through the orchestrator, on two shards", () => {
  it("installs, pushes, runs through the orchestrator with -e args, reruns, pulls and keeps coverage per shard", async () => {
    const suite: Suite = {
      tests: [
        {
          class: login,
          method: "signsIn",
          outcome: "pass",
          duration_ms: 100,
          writes: { "/sdcard/screenshots/signsIn.png": "a" },
        },
        { class: login, method: "flaky", outcomes: ["fail", "pass"], duration_ms: 100 },
        {
          class: cart,
          method: "addsItem",
          outcome: "pass",
          duration_ms: 100,
          writes: { "/sdcard/screenshots/addsItem.png": "b", "/sdcard/screenshots/notes.txt": "x" },
        },
        { class: cart, method: "checksOut", outcome: "pass", duration_ms: 100 },
      ],
    };
    const lab = await android.createLab({
      devices: SERIALS.map((serial) => ({ serial, model: "Pixel 7", release: "14", sdk: 34 })),
      suites: { [TEST_PACKAGE]: suite },
      timeScale: 0.02,
    });
    await putVersionFile("helper.apk", readFileSync(path.join(TOOLS, "helper.apk")));
    await putVersionFile("users.json", Buffer.from('{"users":["ann"]}'));

    const plan = await call(`${android.server.baseUrl}/testplans`, {
      headers: android.ci,
      json: {
        name: "flank-like",
        package_name: "com.example.basic",
        devices: [{ platform: "android", model: "Pixel 7", locale: "fr_FR", orientation: "landscape" }],
        steps: [
          {
            type: "instrumentation",
            record_video: "never",
            use_orchestrator: true,
            environment: { "user.name": "ann", clearPackageData: "true" },
            additional_apks: ["helper.apk"],
            push: [{ file: "users.json", to: "/sdcard/Download/users.json" }],
            pull: ["/sdcard/screenshots", "/sdcard/absent"],
            pull_filter: ["\\.png$"],
            coverage: true,
            retry_failed_tests: 1,
            shards: 2,
            sharding: "uniform",
          },
        ],
      },
    });
    expect(plan.status).toBe(201);
    const run = await call(`${android.server.baseUrl}/testplan/run`, {
      headers: android.ci,
      json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.0.0" },
    });
    expect(run.status).toBe(200);
    const id = run.body.execution.id as string;
    startAgent("rack-1", lab.env, ["--android-tools", TOOLS, "--concurrency", "2"]);
    const view = await finished(id);
    expect(view).toMatchObject({ status: "passed", summary: { tests: 4, passed: 4, flaky: 1 } });

    for (const serial of SERIALS) {
      const commands = lab
        .calls()
        .filter((c) => c.tool === "adb" && c.serial === serial)
        .map((c) => c.argv.slice(2).join(" "));
      // The device entry's locale and orientation first, then the APKs in order, then the pushed file.
      expect(
        commands.indexOf("shell setprop persist.sys.locale fr-FR && setprop ctl.restart zygote"),
      ).toBeGreaterThan(-1);
      expect(commands).toContain(
        "shell settings put system accelerometer_rotation 0 && settings put system user_rotation 1",
      );
      const installs = commands.filter((c) => c.startsWith("install ")).map((c) => path.basename(c));
      expect(installs.slice(0, 5)).toEqual([
        "orchestrator-1.5.1.apk",
        "test-services-1.5.0.apk",
        "extra-helper.apk",
        "com.example.basic.apk",
        "com.example.basic.test.apk",
      ]);
      const pushed = commands.findIndex(
        (c) => c.startsWith("push ") && c.endsWith(" /sdcard/Download/users.json"),
      );
      expect(pushed).toBeGreaterThan(commands.findIndex((c) => c.includes("com.example.basic.test.apk")));
      // Every run after the listing through the orchestrator, with the plan's -e arguments and a batch file.
      const runs = commands.filter((c) => c.includes("am instrument")).slice(1);
      expect(runs.length).toBeGreaterThan(0);
      for (const r of runs) {
        expect(r).toContain(
          "app_process / androidx.test.services.shellexecutor.ShellMain am instrument -r -w -e targetInstrumentation",
        );
        expect(r).toContain("-e 'user.name' 'ann' -e 'clearPackageData' 'true'");
        expect(r).toMatch(
          /-e 'testFile' '\/data\/local\/tmp\/testbay-batch-|-e 'class' 'com\.example\.basic\.LoginTest#flaky'/,
        );
      }
      // Pulled after the run, on every shard.
      expect(commands.findIndex((c) => c.startsWith("pull /sdcard/screenshots "))).toBeGreaterThan(
        commands.findLastIndex((c) => c.includes("am instrument")),
      );
      expect(lab.files(serial)["/sdcard/Download/users.json"]?.toString()).toBe('{"users":["ann"]}');
    }

    // The flaky test was rerun alone through the orchestrator and passed.
    const tests = (await call(`${android.server.baseUrl}/executions/${id}/tests`, { headers: android.ci }))
      .body.items;
    const flaky = tests.find((t: { name: string }) => t.name === "flaky");
    expect(flaky).toMatchObject({ status: "passed", flaky: true });

    // Artifacts: each shard's pulled PNGs (not the .txt) and its coverage files.
    const artifacts = (
      await call(`${android.server.baseUrl}/executions/${id}/artifacts`, { headers: android.ci })
    ).body;
    const names: string[] = (artifacts.items ?? artifacts).map((a: { name: string }) => a.name);
    const pulled = names.filter((n) => n.startsWith("pulled/")).sort();
    expect(pulled).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^pulled\/[01]\/sdcard\/screenshots\/(signsIn|addsItem)\.png$/),
      ]),
    );
    expect(pulled.some((n) => n.endsWith("notes.txt"))).toBe(false);
    expect(new Set(pulled.map((n) => n.split("/")[1]))).toEqual(new Set(["0", "1"]));
    const coverage = names.filter((n) => n.startsWith("coverage/")).sort();
    expect(coverage.map((n) => n.replace(/^coverage\/[01]\//, "")).sort()).toEqual([
      "com.example.basic.CartTest_addsItem.ec",
      "com.example.basic.CartTest_checksOut.ec",
      "com.example.basic.LoginTest_flaky.ec",
      "com.example.basic.LoginTest_signsIn.ec",
    ]);
    const log = (await call(`${android.server.baseUrl}/executions/${id}/log`, { headers: android.ci })).body;
    expect(String(typeof log === "string" ? log : JSON.stringify(log))).toContain(
      "warning: /sdcard/absent is not on the device; nothing pulled from it",
    );

    // The agent does not manage these emulators: each is given back the rotation and locale it had (the
    // stand-in's settings unset, the build's en-US), after the run.
    const read = (serial: string, command: string) =>
      execFileSync("adb", ["-s", serial, "shell", command], { env: lab.env, encoding: "utf8" }).trim();
    for (const serial of SERIALS) {
      await expect
        .poll(() => [
          read(serial, "settings get system user_rotation"),
          read(serial, "settings get system accelerometer_rotation"),
          read(serial, "getprop persist.sys.locale"),
        ])
        .toEqual(["null", "null", "en-US"]);
    }
    // Two agents' worth of device work (three framework restarts per emulator, two shards, a rerun): a minute
    // and more on a loaded 2-core machine, over the suites' default limit.
  }, 180_000);
});
