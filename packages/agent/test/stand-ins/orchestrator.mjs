// AndroidX Test Orchestrator as `adb shell 'CLASSPATH=$(pm path androidx.test.services) app_process /
// androidx.test.services.shellexecutor.ShellMain am instrument -r -w -e targetInstrumentation PKG/RUNNER …
// androidx.test.orchestrator/.AndroidTestOrchestrator'` runs it (API.md §14). Modelled after the orchestrator's
// sources (android/android-test runner/android_test_orchestrator, Apache-2.0):
// - AndroidTestOrchestrator: `targetInstrumentation` is required ("You must provide a target
//   instrumentation.", thrown in onCreate); the tests are collected through the target instrumentation with the
//   same arguments (skipped when `class` names one fully qualified method); then each test runs in its own
//   instrumentation (a process of its own), with `pm clear` of the app and of the test package before each
//   when `clearPackageData` is true; `coverage true` + `coverageFilePath DIR/` writes DIR/<Class#method>.ec per
//   test; no tests collected → finish(RESULT_CANCELED): INSTRUMENTATION_CODE 0 with "Time: 0" and "OK (0 tests)",
//   as a recorded run prints it (android/android-test issue 1834); else RESULT_OK (-1).
// - OrchestrationResultPrinter ("a line by line reimplementation of InstrumentationResultPrinter"): the same
//   status bundles (id=AndroidJUnitRunner, numtests = the collected count, class, test, current, stream,
//   stack), the same codes; the final stream is "\n" + JUnit TextListener's summary.
// - OrchestrationListenerManager.testProcessFinished: a test whose process died before it finished is reported
//   failed (-2), its stack being the message of `new Throwable("Test instrumentation process crashed. Check
//   <Class#method>.txt for details")` alone (ParcelableFailure keeps getMessage(), newline-ended), and the run goes
//   on with the next test: one crash no longer ends the run.

import {
  amFailure,
  outcomeOfRun,
  parseInstrumentArgs,
  select,
  stackOf,
  status,
  textSummary,
  writeCoverage,
  writeTestFiles,
} from "./instrument.mjs";
import { log } from "./logcat.mjs";
import { pmClear } from "./packages.mjs";
import { deviceSleep, paths, readJson, watchAttached, writeJson } from "./state.mjs";

export const ORCHESTRATOR_COMPONENT = "androidx.test.orchestrator/.AndroidTestOrchestrator";
const SHELL_MAIN = "androidx.test.services.shellexecutor.ShellMain";

/** `CLASSPATH=$(pm path androidx.test.services) app_process / ShellMain am instrument …`, or null when not that. */
export function orchestratorLine(line) {
  const m = /^CLASSPATH=\$\(pm path ([\w.]+)\) app_process \/ ([\w.]+) (.*)$/s.exec(line.trim());
  if (!m) return null;
  return { servicesPackage: m[1], mainClass: m[2], rest: m[3] };
}

function out(text) {
  process.stdout.write(text);
}

/** Resolves with the exit code of the device shell. */
export async function runOrchestrator(serial, call, words, onGone) {
  const installed = readJson(paths.packages(serial), {});
  if (call.mainClass !== SHELL_MAIN || !installed[call.servicesPackage]) {
    // pm path printed nothing, so the class path is empty and app_process cannot find its class: the runtime
    // aborts. Logcat as recorded for a missing ShellMain (android/android-test#748); on the shell only
    // "Aborted" (android/testing-samples#477, app_process not finding its class). The exit status is 128 +
    // SIGABRT by the shell's convention, not seen in a recording.
    const pid = 20000 + Math.floor(Math.random() * 20000);
    log(serial, pid, pid, "E", "appproc", `ERROR: could not find class '${call.mainClass}'`);
    log(serial, pid, pid, "F", "app_process", [
      `java_vm_ext.cc:570] JNI DETECTED ERROR IN APPLICATION: JNI NewGlobalRef called with pending exception java.lang.ClassNotFoundException: ${call.mainClass}`,
      "java_vm_ext.cc:570] (Throwable with empty stack trace)",
      "java_vm_ext.cc:570] ",
      "java_vm_ext.cc:570]     in call to NewGlobalRef",
      "runtime.cc:630] Runtime aborting...",
    ]);
    out("Aborted\n");
    return 134;
  }
  if (words[0] !== "am" || words[1] !== "instrument") {
    process.stderr.write(`stand-in adb: unsupported: ShellMain ${words.join(" ")}\n`);
    return 1;
  }
  const { flags, extras, component } = parseInstrumentArgs(words.slice(2));
  if (!flags.has("-w") || !flags.has("-r")) {
    process.stderr.write("stand-in adb: unsupported: am instrument without -w -r\n");
    return 1;
  }
  const orchestrator = installed["androidx.test.orchestrator"];
  if (
    component !== ORCHESTRATOR_COMPONENT ||
    orchestrator?.instrumentation?.name !== "androidx.test.orchestrator.AndroidTestOrchestrator"
  ) {
    const [pkg, cls] = String(component).split("/");
    const runner = cls?.startsWith(".") ? pkg + cls : cls;
    return amFailure(component, `Unable to find instrumentation info for: ComponentInfo{${pkg}/${runner}}`);
  }
  const pid = 20000 + Math.floor(Math.random() * 20000);
  const target = extras.targetInstrumentation;
  if (target === undefined) {
    const longMsg = `java.lang.RuntimeException: Exception thrown in onCreate() of ComponentInfo{androidx.test.orchestrator/androidx.test.orchestrator.AndroidTestOrchestrator}: java.lang.IllegalArgumentException: You must provide a target instrumentation.`;
    log(serial, pid, pid, "E", "AndroidRuntime", [
      "FATAL EXCEPTION: main",
      `Process: androidx.test.orchestrator, PID: ${pid}`,
      longMsg,
    ]);
    out(
      `INSTRUMENTATION_RESULT: longMsg=${longMsg}\nINSTRUMENTATION_RESULT: shortMsg=java.lang.RuntimeException\nINSTRUMENTATION_CODE: 0\n`,
    );
    return 0;
  }
  const [testPackage, rawRunner] = target.split("/");
  const runner = rawRunner?.startsWith(".") ? testPackage + rawRunner : rawRunner;
  const info = installed[testPackage]?.instrumentation;
  const started = Date.now();
  log(
    serial,
    pid,
    pid,
    "I",
    "AndroidTestOrchestrator",
    `Multiple test parameter ${extras.class ?? "null"}, starting test collection`,
  );
  // Collection through the target instrumentation: nothing when it is not there (its `am instrument` fails).
  let tests = [];
  if (info && info.name === runner && installed[info.targetPackage]) {
    const suite = readJson(paths.suites(), {})[testPackage] ?? { tests: [] };
    const picked = select(serial, suite.tests ?? [], extras);
    tests = picked.error ? [] : picked.tests;
  }
  if (tests.length === 0) {
    // "Time: 0", whatever the collection took: what the orchestrator printed in a recorded run whose collection
    // found nothing (android/android-test issue 1834; test/fixtures/transcripts/sources.md).
    out(`INSTRUMENTATION_RESULT: stream=${textSummary(0, 0, [])}\nINSTRUMENTATION_CODE: 0\n`);
    return 0;
  }
  let gone = false;
  watchAttached(serial, () => {
    gone = true;
    onGone();
  });
  const listOnly = extras.log === "true";
  const failures = [];
  let counted = 0;
  let previousClass;
  const coverageDir = extras.coverage === "true" ? extras.coverageFilePath : undefined;
  for (let i = 0; i < tests.length; i++) {
    if (gone) return new Promise(() => {});
    const test = tests[i];
    const key = `${test.class}#${test.method}`;
    const testPid = pid + 1 + i;
    if (extras.clearPackageData === "true") {
      // The orchestrator's own `pm clear`s, through the shell executor: their output is not the run's.
      const write = process.stdout.write;
      process.stdout.write = () => true;
      try {
        pmClear(serial, info.targetPackage);
        pmClear(serial, testPackage);
      } finally {
        process.stdout.write = write;
      }
      recordClear(serial, key);
    }
    const base = { class: test.class, current: i + 1, id: "AndroidJUnitRunner", numtests: tests.length };
    const name = `${test.method}(${test.class})`;
    const outcome = listOnly ? "pass" : outcomeOfRun(serial, test, info.targetPackage);
    const firstOfClass = previousClass !== test.class;
    previousClass = test.class;
    log(serial, testPid, testPid, "I", "TestRunner", `started: ${name}`);
    status({ ...base, stream: firstOfClass ? `\n${test.class}:` : "", test: test.method }, 1);
    if (!listOnly && outcome !== "ignored") {
      await deviceSleep(test.duration_ms ?? 0, serial);
      if (gone) return new Promise(() => {});
      writeJson(paths.screen(serial), {
        app: info.targetPackage,
        class: test.class,
        method: test.method,
        state: "running",
      });
      writeTestFiles(serial, test);
      for (const line of test.logcat ?? []) {
        const m = /^([VDIWEF])\/([^:]+): ?(.*)$/.exec(line);
        if (m) log(serial, testPid, testPid, m[1], m[2], m[3]);
        else log(serial, testPid, testPid, "I", "TestApp", line);
      }
    }
    if (outcome === "pass") {
      status({ ...base, stream: ".", test: test.method }, 0);
      counted++;
    } else if (outcome === "ignored") {
      status({ ...base, stream: "", test: test.method }, -3);
    } else if (outcome === "assumption") {
      status({ ...base, stack: stackOf(test, outcome), stream: "", test: test.method }, -4);
      counted++;
    } else if (outcome === "fail" || outcome === "error" || outcome === "crash") {
      // A crashed test's "stack" is the Throwable's message alone, newline-ended: ParcelableFailure keeps
      // t.getMessage(), not a trace; so do the orchestrator runs transcribed in AOSP's AmInstrumentationParserTest
      // (test/fixtures/transcripts/aosp-orchestrator-*.txt).
      const stack =
        outcome === "crash"
          ? `Test instrumentation process crashed. Check ${key}.txt for details\n`
          : stackOf(test, outcome);
      if (outcome === "crash") {
        log(serial, testPid, testPid, "E", "AndroidRuntime", [
          "FATAL EXCEPTION: main",
          `Process: ${info.targetPackage}, PID: ${testPid}`,
          ...stackOf(test, outcome).trimEnd().split("\n"),
        ]);
      }
      writeJson(paths.screen(serial), {
        app: info.targetPackage,
        class: test.class,
        method: test.method,
        state: "failed",
        message: stack.split("\n", 1)[0],
      });
      status({ ...base, stack, stream: `\nError in ${name}:\n${stack}`, test: test.method }, -2);
      failures.push({ name, stack });
      counted++;
    } else {
      process.stderr.write(`stand-in adb: unsupported: test outcome ${JSON.stringify(outcome)}\n`);
      return 1;
    }
    // Each test's instrumentation dumps its coverage when it finishes (not a crashed one).
    if (coverageDir && !listOnly && outcome !== "crash")
      writeCoverage(serial, `${coverageDir}${key}.ec`, `${key}-${testPid}`, started);
    log(serial, testPid, testPid, "I", "TestRunner", `finished: ${name}`);
  }
  // createResultBundle: "\n" + TextListener's summary, which starts with a blank line of its own.
  out(
    `INSTRUMENTATION_RESULT: stream=${textSummary(Date.now() - started, counted, failures)}\nINSTRUMENTATION_CODE: -1\n`,
  );
  return 0;
}

/** The lab's own record (not a device's output): which test each orchestrated `pm clear` came before. */
function recordClear(serial, key) {
  const file = `${paths.device(serial)}/orchestrator-clears.json`;
  writeJson(file, [...readJson(file, []), key]);
}
