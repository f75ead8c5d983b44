/**
 * Writes the orchestrator transcripts of fixtures/transcripts/modelled/: what the adb stand-in's model of
 * AndroidX Test Orchestrator (stand-ins/orchestrator.mjs, after the orchestrator's own sources) prints for a
 * few suites, byte for byte. They are the model's output, not recordings: the recorded orchestrator output
 * found in public issue threads (fixtures/transcripts/sources.md) covers only a run that collected nothing and
 * a per-test file, so these check that ddmlib's parser and ours read the model's other shapes alike: a crashed
 * test reported -2 with the run going on, ignored and assumption tests (and no tests at all, which the
 * recording of android/android-test#1834 confirms byte for byte).
 *
 *   npx tsx packages/agent/test/reference-parser/record-orchestrator.ts
 *
 * then record-reference.ts for their reference verdicts. Time lines ("Time: 0.123") vary from run to run.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createDeviceLab, type SuiteTest } from "../stand-ins/device-lab.ts";
import { run } from "../stand-ins/run.ts";
import { MODELLED_DIR } from "./reference.ts";

const BINARIES = fileURLToPath(new URL("../../../server/test/fixtures/binaries/", import.meta.url));
const TOOLS = fileURLToPath(new URL("../fixtures/tool-apks/", import.meta.url));
const S = "emulator-5554";
const ORCHESTRATED =
  "CLASSPATH=$(pm path androidx.test.services) app_process / androidx.test.services.shellexecutor.ShellMain am instrument -r -w -e targetInstrumentation com.example.basic.test/androidx.test.runner.AndroidJUnitRunner";
const login = "com.example.basic.LoginTest";
const cart = "com.example.basic.CartTest";

const suites: Record<string, { tests: SuiteTest[]; args?: string }> = {
  "orchestrator-crash-goes-on.txt": {
    tests: [
      { class: login, method: "signsIn", outcome: "pass" },
      { class: login, method: "crashes", outcome: "crash" },
      { class: login, method: "rejects", outcome: "fail" },
      { class: cart, method: "addsItem", outcome: "pass" },
    ],
  },
  "orchestrator-ignored-assumption.txt": {
    tests: [
      { class: cart, method: "later", outcome: "ignored" },
      { class: cart, method: "onTablet", outcome: "assumption" },
      { class: cart, method: "addsItem", outcome: "pass" },
    ],
  },
  "orchestrator-no-tests.txt": {
    tests: [{ class: login, method: "signsIn", outcome: "pass" }],
    args: `-e class ${cart}`,
  },
};

for (const [name, { tests, args }] of Object.entries(suites)) {
  const lab = await createDeviceLab({
    devices: [{ serial: S, model: "Pixel 7", sdk: 34 }],
    suites: { "com.example.basic.test": { tests } },
    timeScale: 0,
  });
  try {
    for (const apk of [
      join(BINARIES, "app-basic.apk"),
      join(BINARIES, "app-basic-androidTest.apk"),
      join(TOOLS, "orchestrator-1.5.1.apk"),
      join(TOOLS, "test-services-1.5.0.apk"),
    ]) {
      await run(lab, "adb", ["-s", S, "install", "-r", "-t", apk]);
    }
    const ran = await run(lab, "adb", [
      "-s",
      S,
      "shell",
      `${ORCHESTRATED} ${args ?? ""} androidx.test.orchestrator/.AndroidTestOrchestrator`,
    ]);
    writeFileSync(join(MODELLED_DIR, name), ran.stdout);
    console.log(`${name}: ${ran.stdout.length} bytes`);
  } finally {
    lab.cleanup();
  }
}
