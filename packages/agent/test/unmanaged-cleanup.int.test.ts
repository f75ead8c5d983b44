import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { waitFor } from "./agent-process.ts";
import { androidServer } from "./android-server.ts";

// API.md §13: a device the agent does not manage (plugged in) is not reset, but the app and the test package a
// run installed are uninstalled after it, so the next run on it does not find them.

const TEST_PACKAGE = "com.example.basic.test";
const TOOLS = fileURLToPath(new URL("./fixtures/tool-apks/", import.meta.url));
const SERIAL = "2B121FDH200A7Q";
const android = androidServer();

describe("devices the agent does not manage (stand-in)", () => {
  it("get the app and the test package uninstalled after each run, and the next run installs them afresh", async () => {
    const lab = await android.createLab({
      devices: [{ serial: SERIAL, model: "Pixel 7", release: "14", sdk: 34, usb: "1-1" }],
      suites: {
        [TEST_PACKAGE]: {
          tests: [
            { class: "com.example.basic.LoginTest", method: "signsIn", outcome: "pass", duration_ms: 100 },
          ],
        },
      },
      timeScale: 0.05,
    });
    // Something of the device's own that no run installed stays.
    lab.preinstall(SERIAL, { package: "com.android.chrome", versionCode: 1 });
    android.startAgent("plugged-1", lab.env);
    for (let run = 1; run <= 2; run++) {
      const id = await android.triggerInstrumentation("1.0.0", { record_video: "never" });
      expect((await android.finished(id)).status).toBe("passed");
      await waitFor(
        "the run's packages uninstalled",
        async () => !lab.installed(SERIAL)["com.example.basic"],
      );
      await waitFor("the test package uninstalled", async () => !lab.installed(SERIAL)[TEST_PACKAGE]);
      expect(Object.keys(lab.installed(SERIAL))).toEqual(["com.android.chrome"]);
    }
    const installs = lab.installLog().filter((i) => i.serial === SERIAL);
    expect(installs.map((i) => [i.package, i.alreadyInstalled])).toEqual([
      ["com.example.basic", false],
      [TEST_PACKAGE, false],
      ["com.example.basic", false],
      [TEST_PACKAGE, false],
    ]);
    const uninstalls = lab
      .calls()
      .filter((c) => c.tool === "adb" && c.argv.includes("uninstall"))
      .map((c) => c.argv.at(-1));
    expect(uninstalls).toEqual(["com.example.basic", TEST_PACKAGE, "com.example.basic", TEST_PACKAGE]);
  });
});

describe("an additional APK on a device the agent does not manage (stand-in)", () => {
  it("is uninstalled after the run with the app and the test package; the orchestrator's tools stay", async () => {
    const lab = await android.createLab({
      devices: [{ serial: SERIAL, model: "Pixel 7", release: "14", sdk: 34, usb: "1-1" }],
      suites: {
        [TEST_PACKAGE]: {
          tests: [
            { class: "com.example.basic.LoginTest", method: "signsIn", outcome: "pass", duration_ms: 100 },
          ],
        },
      },
      timeScale: 0.05,
    });
    const upload = await fetch(
      `${android.server.baseUrl}/apps/com.example.basic/versions/1.0.0/files/helper.apk`,
      {
        method: "PUT",
        headers: { ...android.ci, "content-type": "application/octet-stream" },
        body: readFileSync(path.join(TOOLS, "helper.apk")),
      },
    );
    expect(upload.status).toBe(201);
    android.startAgent("plugged-2", lab.env, ["--android-tools", TOOLS]);
    const id = await android.triggerInstrumentation("1.0.0", {
      record_video: "never",
      use_orchestrator: true,
      additional_apks: ["helper.apk"],
    });
    expect((await android.finished(id)).status).toBe("passed");
    await waitFor("the run's packages uninstalled", async () => !lab.installed(SERIAL)["com.example.helper"]);
    await waitFor("the app uninstalled", async () => !lab.installed(SERIAL)["com.example.basic"]);
    expect(Object.keys(lab.installed(SERIAL)).sort()).toEqual([
      "androidx.test.orchestrator",
      "androidx.test.services",
    ]);
  });
});
