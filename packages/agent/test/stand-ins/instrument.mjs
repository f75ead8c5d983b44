// `am instrument -w -r [-e K V]... PKG/RUNNER` with AndroidJUnitRunner as the runner.
// Sources for the shape of the output:
// - frameworks/base cmds/am Instrument.java: raw (-r) mode prints each status bundle as
//   "INSTRUMENTATION_STATUS: key=value" lines (keys sorted) then "INSTRUMENTATION_STATUS_CODE: n",
//   the final bundle as "INSTRUMENTATION_RESULT: key=value" then "INSTRUMENTATION_CODE: n"; a failed
//   start throws AndroidException("INSTRUMENTATION_FAILED: " + component).
// - ActivityManagerService.startInstrumentation: "Unable to find instrumentation info for: " +
//   ComponentInfo and "Unable to find instrumentation target package: " + target, reported with
//   id=ActivityManagerService and status code -1. A dead process: shortMsg "Process crashed.".
// - androidx.test InstrumentationResultPrinter: status codes 1 start, 0 ok, -2 failure, -3
//   ignored, -4 assumption failure; keys class/current/id/numtests/stack/stream/test; stream is
//   "\nClass:" for a class's first test, "." for a pass, "\nError in m(C):\n" + trace for a failure.
//   JUnit TextListener writes the final stream ("Time: …", failures, "OK (n tests)" or
//   "FAILURES!!!\nTests run: n,  Failures: m"). Ignored tests are not counted in the run count.
// - androidx.test LogRunListener: "TestRunner: started: m(C)" / "finished:" / "failed:" log lines.
// - androidx.test RunnerArgs: -e class/notClass/package/notPackage/annotation/notAnnotation/size/
//   testFile/log; unknown keys are ignored.
// - androidx.test CoverageListener: with `-e coverage true` the runner dumps JaCoCo's execution data when the
//   run finishes to `-e coverageFile` (default /data/data/<target>/files/coverage.ec), puts its path in the
//   result bundle as coverageFilePath and adds "\nGenerated code coverage data to <path>" to the stream.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { log } from "./logcat.mjs";
import { deviceSleep, hostPath, paths, readJson, setAttached, watchAttached, writeJson } from "./state.mjs";

const RUNNER_TAG = "TestRunner";
/**
 * Device time a test takes to bring its activity up: until then the screen still shows what the test before left,
 * so a screenshot taken just after a failure shows that failure (the agent takes it once it reads the status).
 */
const LAUNCH_MS = 1000;

/** What the device's screen shows from now on (screencap.mjs draws it). */
function showScreen(serial, screen) {
  writeJson(paths.screen(serial), screen);
}

/** The line a failure's trace starts with: the exception and its message. */
function errorLine(stack) {
  return stack.split("\n", 1)[0] ?? "";
}

function out(text) {
  process.stdout.write(text);
}

export function status(bundle, code) {
  let text = "";
  for (const key of Object.keys(bundle).sort()) text += `INSTRUMENTATION_STATUS: ${key}=${bundle[key]}\n`;
  out(`${text}INSTRUMENTATION_STATUS_CODE: ${code}\n`);
}

export function amFailure(component, message) {
  status({ Error: message, id: "ActivityManagerService" }, -1);
  process.stderr.write(
    `android.util.AndroidException: INSTRUMENTATION_FAILED: ${component}\n` +
      "\tat com.android.commands.am.Instrument.run(Instrument.java:519)\n" +
      "\tat com.android.commands.am.Am.runInstrument(Am.java:196)\n" +
      "\tat com.android.commands.am.Am.onRun(Am.java:80)\n" +
      "\tat com.android.internal.os.BaseCommand.run(BaseCommand.java:60)\n" +
      "\tat com.android.commands.am.Am.main(Am.java:50)\n" +
      "\tat com.android.internal.os.RuntimeInit.nativeFinishInit(Native Method)\n" +
      "\tat com.android.internal.os.RuntimeInit.main(RuntimeInit.java:399)\n",
  );
  return 1;
}

export function parseInstrumentArgs(args) {
  const flags = new Set();
  const extras = {};
  let component;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "-e" || arg === "--es") {
      extras[args[i + 1]] = args[i + 2];
      i += 2;
    } else if (arg.startsWith("-")) {
      flags.add(arg);
    } else {
      component = arg;
    }
  }
  return { flags, extras, component };
}

function simpleName(fqcn) {
  return fqcn.slice(fqcn.lastIndexOf(".") + 1);
}

function defaultStack(test, outcome) {
  const exception =
    outcome === "assumption"
      ? "org.junit.AssumptionViolatedException: got: <false>, expected: is <true>"
      : outcome === "error"
        ? "java.lang.IllegalStateException: unexpected state"
        : outcome === "crash"
          ? "java.lang.RuntimeException: crash in test"
          : "java.lang.AssertionError: expected:<true> but was:<false>";
  return (
    `${exception}\n` +
    `\tat ${test.class}.${test.method}(${simpleName(test.class)}.kt:42)\n` +
    "\tat java.lang.reflect.Method.invoke(Native Method)\n" +
    "\tat org.junit.runners.model.FrameworkMethod$1.runReflectiveCall(FrameworkMethod.java:59)\n" +
    "\tat androidx.test.runner.AndroidJUnitRunner.onStart(AndroidJUnitRunner.java:446)\n" +
    "\tat android.app.Instrumentation$InstrumentationThread.run(Instrumentation.java:2205)\n"
  );
}

export function stackOf(test, outcome = test.outcome) {
  const stack = test.stack ?? defaultStack(test, outcome);
  return stack.endsWith("\n") ? stack : `${stack}\n`;
}

// androidx.test RunnerArgs CLASS_OR_METHOD_REGEX: a class whose simple name starts upper case, optionally
// "#method" with a Java identifier; a parameterized index ("m[2]") does not match.
const CLASS_OR_METHOD =
  /^([\p{L}_$][\p{L}\p{N}_$]*\.)*[\p{Lu}_$][\p{L}\p{N}_$]*(#[\p{L}_$][\p{L}\p{N}_$]*)?$/u;

function listArg(value) {
  return value === undefined ? [] : String(value).split(",").filter(Boolean);
}

// androidx MethodFilter compares a method name both whole and without a parameterized index suffix
// ("signsIn[2]" matches "signsIn[2]" and "signsIn"); older runners compare only the latter.
function matchesClassSpec(test, spec) {
  const [cls, method] = spec.split("#");
  const root = test.method.replace(/(.)\[[0-9]+\]$/, "$1");
  return test.class === cls && (method === undefined || method === test.method || method === root);
}

/**
 * How the test behaves on this run: `outcomes[n]` on its n-th run on this device (0 the first), the last
 * entry once they run out; `outcome` for a test without `outcomes`. Runs are counted per device in its
 * state, so a flaky test fails, then passes when the agent reruns it. With `sinceInstall`, n counts only the
 * runs since the app under test was last installed on the device (a fresh install's cold start is a common
 * cause of a test that fails on its first run only), so it starts again at 0 with each install.
 */
export function outcomeOfRun(serial, test, targetPackage) {
  if (!Array.isArray(test.outcomes) || test.outcomes.length === 0) return test.outcome;
  const file = paths.testRuns(serial);
  const runs = readJson(file, {});
  const key = `${test.class}#${test.method}`;
  let n = runs[key] ?? 0;
  writeJson(file, { ...runs, [key]: n + 1 });
  if (test.sinceInstall) {
    const install = readJson(paths.packages(serial), {})[targetPackage]?.installs ?? 0;
    const sinceFile = paths.testRunsSinceInstall(serial);
    const since = readJson(sinceFile, {});
    n = since[key]?.install === install ? since[key].runs : 0;
    writeJson(sinceFile, { ...since, [key]: { install, runs: n + 1 } });
  }
  return test.outcomes[Math.min(n, test.outcomes.length - 1)];
}

function sizeOf(test) {
  if (test.size) return test.size;
  const annotations = test.annotations ?? [];
  for (const size of ["small", "medium", "large"]) {
    const name = `${size[0].toUpperCase()}${size.slice(1)}Test`;
    if (annotations.some((a) => a === name || a.endsWith(`.${name}`))) return size;
  }
  return undefined;
}

function hasAnnotation(test, wanted) {
  return (test.annotations ?? []).some((a) => a === wanted);
}

/** Returns the selected tests, or a runner error message (thrown from RunnerArgs in onCreate). */
export function select(serial, tests, extras) {
  let selected = tests;
  const classes = listArg(extras.class);
  const packages = listArg(extras.package);
  if (extras.testFile !== undefined) {
    const file = hostPath(serial, extras.testFile);
    if (!existsSync(file)) return { error: `testfile not found: ${extras.testFile}` };
    // RunnerArgs reads a line matching CLASS_OR_METHOD_REGEX as a class or method, any other as packages.
    for (const raw of readFileSync(file, "utf8").split("\n")) {
      const line = raw.trim();
      if (!line) continue;
      if (CLASS_OR_METHOD.test(line)) classes.push(line);
      else packages.push(...listArg(line));
    }
  }
  if (classes.length > 0) selected = selected.filter((t) => classes.some((c) => matchesClassSpec(t, c)));
  const notClasses = listArg(extras.notClass);
  selected = selected.filter((t) => !notClasses.some((c) => matchesClassSpec(t, c)));
  if (packages.length > 0)
    selected = selected.filter((t) => packages.some((p) => t.class.startsWith(`${p}.`)));
  const notPackages = listArg(extras.notPackage);
  selected = selected.filter((t) => !notPackages.some((p) => t.class.startsWith(`${p}.`)));
  const annotations = listArg(extras.annotation);
  if (annotations.length > 0) selected = selected.filter((t) => annotations.some((a) => hasAnnotation(t, a)));
  const notAnnotations = listArg(extras.notAnnotation);
  selected = selected.filter((t) => !notAnnotations.some((a) => hasAnnotation(t, a)));
  if (extras.size !== undefined) selected = selected.filter((t) => sizeOf(t) === extras.size);
  return { tests: selected };
}

export function formatSeconds(ms) {
  return new Intl.NumberFormat("en-US", { maximumFractionDigits: 3 }).format(ms / 1000);
}

/**
 * JaCoCo execution data as the runner dumps it (org.jacoco.core.data.ExecutionDataWriter): the header block
 * (0x01, magic 0xC0C0, format version 0x1007), then a session info block (0x10: id, start and dump times). No
 * class data: the stand-in's tests run no app code. Enough for a reader to know the format.
 */
export function jacocoExec(sessionId, startMs, dumpMs) {
  const id = Buffer.from(sessionId, "utf8");
  const out = Buffer.alloc(5 + 1 + 2 + id.length + 16);
  let at = out.writeUInt8(0x01, 0);
  at = out.writeUInt16BE(0xc0c0, at);
  at = out.writeUInt16BE(0x1007, at);
  at = out.writeUInt8(0x10, at);
  at = out.writeUInt16BE(id.length, at);
  at += id.copy(out, at);
  at = out.writeBigInt64BE(BigInt(startMs), at);
  out.writeBigInt64BE(BigInt(dumpMs), at);
  return out;
}

/** Writes a coverage file on the device (the app's process writes it: public storage must exist). */
export function writeCoverage(serial, devicePath, sessionId, startMs) {
  const file = hostPath(serial, devicePath);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, jacocoExec(sessionId, startMs, Date.now()));
}

/** The files a suite's test writes on the device as it runs (its `writes`). */
export function writeTestFiles(serial, test) {
  for (const [devicePath, contents] of Object.entries(test.writes ?? {})) {
    const file = hostPath(serial, devicePath);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, contents);
  }
}

/** Runs the instrumentation; resolves with the process exit code. */
export async function amInstrument(serial, args, onGone) {
  const { flags, extras, component } = parseInstrumentArgs(args);
  if (!component?.includes("/")) {
    process.stderr.write(`stand-in adb: unsupported: am instrument ${args.join(" ")}\n`);
    return 1;
  }
  if (!flags.has("-w") || !flags.has("-r")) {
    process.stderr.write("stand-in adb: unsupported: am instrument without -w -r\n");
    return 1;
  }
  const [testPackage, rawRunner] = component.split("/");
  const runner = rawRunner.startsWith(".") ? testPackage + rawRunner : rawRunner;
  const installed = readJson(paths.packages(serial), {});
  const testApp = installed[testPackage];
  const info = testApp?.instrumentation;
  if (!info || info.name !== runner) {
    return amFailure(
      component,
      `Unable to find instrumentation info for: ComponentInfo{${testPackage}/${runner}}`,
    );
  }
  if (!installed[info.targetPackage]) {
    return amFailure(component, `Unable to find instrumentation target package: ${info.targetPackage}`);
  }

  const pid = 10000 + Math.floor(Math.random() * 20000);
  const suites = readJson(paths.suites(), {});
  const suite = suites[testPackage] ?? { tests: [] };
  const picked = select(serial, suite.tests ?? [], extras);
  if (picked.error) {
    const longMsg = `java.lang.RuntimeException: Exception thrown in onCreate() of ComponentInfo{${testPackage}/${runner}}: java.lang.IllegalArgumentException: ${picked.error}`;
    log(serial, pid, pid, "E", "AndroidRuntime", [
      "FATAL EXCEPTION: main",
      `Process: ${info.targetPackage}, PID: ${pid}`,
      longMsg,
    ]);
    out(
      `INSTRUMENTATION_RESULT: longMsg=${longMsg}\nINSTRUMENTATION_RESULT: shortMsg=java.lang.RuntimeException\nINSTRUMENTATION_CODE: 0\n`,
    );
    return 0;
  }
  const tests = picked.tests;
  const listOnly = extras.log === "true";
  const vanishAfter = suite.vanishAfterTests;
  let gone = false;
  watchAttached(serial, () => {
    gone = true;
    onGone();
  });

  const tid = pid + 17;
  const started = Date.now();
  const failures = [];
  let ended = 0;
  let counted = 0;
  let ignored = 0;
  let previousClass;
  log(serial, pid, tid, "I", RUNNER_TAG, `run started: ${tests.length} tests`);
  for (let i = 0; i < tests.length; i++) {
    if (gone) return new Promise(() => {});
    const test = tests[i];
    const base = { class: test.class, current: i + 1, id: "AndroidJUnitRunner", numtests: tests.length };
    const name = `${test.method}(${test.class})`;
    const outcome = listOnly ? "pass" : outcomeOfRun(serial, test, info.targetPackage);
    const firstOfClass = previousClass !== test.class;
    previousClass = test.class;
    log(serial, pid, tid, "I", RUNNER_TAG, `started: ${name}`);
    status({ ...base, stream: firstOfClass ? `\n${test.class}:` : "", test: test.method }, 1);
    if (!listOnly) {
      if (outcome !== "ignored") {
        const duration = test.duration_ms ?? 0;
        const launch = Math.min(duration, LAUNCH_MS);
        await deviceSleep(launch, serial);
        if (gone) return new Promise(() => {});
        showScreen(serial, {
          app: info.targetPackage,
          class: test.class,
          method: test.method,
          state: "running",
        });
        await deviceSleep(duration - launch, serial);
      }
      if (gone) return new Promise(() => {});
      writeTestFiles(serial, test);
      const lines = test.logcat ?? [];
      for (const line of lines) {
        const m = /^([VDIWEF])\/([^:]+): ?(.*)$/.exec(line);
        if (m) log(serial, pid, tid, m[1], m[2], m[3]);
        else log(serial, pid, tid, "I", "TestApp", line);
      }
    }
    if (outcome === "crash") {
      const stack = stackOf(test, outcome).trimEnd().split("\n");
      log(serial, pid, tid, "E", "AndroidRuntime", [
        `FATAL EXCEPTION: ${test.thread ?? "main"}`,
        `Process: ${info.targetPackage}, PID: ${pid}`,
        ...stack,
      ]);
      log(
        serial,
        1000,
        1100,
        "I",
        "ActivityManager",
        `Process ${info.targetPackage} (pid ${pid}) has died: fg  TOP `,
      );
      out("INSTRUMENTATION_RESULT: shortMsg=Process crashed.\nINSTRUMENTATION_CODE: 0\n");
      return 0;
    }
    if (outcome === "pass") {
      status({ ...base, stream: ".", test: test.method }, 0);
      counted++;
    } else if (outcome === "ignored") {
      status({ ...base, stream: "", test: test.method }, -3);
      ignored++;
    } else if (outcome === "assumption") {
      status({ ...base, stack: stackOf(test, outcome), stream: "", test: test.method }, -4);
      counted++;
    } else if (outcome === "fail" || outcome === "error") {
      const stack = stackOf(test, outcome);
      showScreen(serial, {
        app: info.targetPackage,
        class: test.class,
        method: test.method,
        state: "failed",
        message: errorLine(stack),
      });
      log(serial, pid, tid, "E", RUNNER_TAG, [
        `failed: ${name}`,
        "----- begin exception -----",
        ...stack.trimEnd().split("\n"),
        "----- end exception -----",
      ]);
      status({ ...base, stack, stream: `\nError in ${name}:\n${stack}`, test: test.method }, -2);
      failures.push({ name, stack });
      counted++;
    } else {
      process.stderr.write(`stand-in adb: unsupported: test outcome ${JSON.stringify(outcome)}\n`);
      return 1;
    }
    if (outcome !== "ignored") log(serial, pid, tid, "I", RUNNER_TAG, `finished: ${name}`);
    else log(serial, pid, tid, "I", RUNNER_TAG, `ignored: ${name}`);
    ended++;
    if (vanishAfter !== undefined && ended >= vanishAfter) {
      setAttached(serial, false);
      gone = true;
      onGone();
      return new Promise(() => {});
    }
  }
  log(
    serial,
    pid,
    tid,
    "I",
    RUNNER_TAG,
    `run finished: ${counted} tests, ${failures.length} failed, ${ignored} ignored`,
  );
  let coverage = "";
  if (!listOnly && extras.coverage === "true") {
    const path = extras.coverageFile ?? `/data/data/${info.targetPackage}/files/coverage.ec`;
    writeCoverage(serial, path, `${testPackage}-${pid}`, started);
    coverage = `\nGenerated code coverage data to ${path}`;
    out(`INSTRUMENTATION_RESULT: coverageFilePath=${path}\n`);
  }
  out(
    `INSTRUMENTATION_RESULT: stream=${textSummary(Date.now() - started, counted, failures)}${coverage}\nINSTRUMENTATION_CODE: -1\n`,
  );
  return 0;
}

/** JUnit TextListener's summary, as both AndroidJUnitRunner and the orchestrator print it in the final stream. */
export function textSummary(elapsedMs, counted, failures) {
  let stream = `\n\nTime: ${formatSeconds(elapsedMs)}\n`;
  if (failures.length === 0) {
    stream += `\nOK (${counted} test${counted === 1 ? "" : "s"})\n\n`;
  } else {
    stream += failures.length === 1 ? "There was 1 failure:\n" : `There were ${failures.length} failures:\n`;
    failures.forEach((f, index) => {
      stream += `${index + 1}) ${f.name}\n${f.stack}`;
    });
    stream += `\nFAILURES!!!\nTests run: ${counted},  Failures: ${failures.length}\n\n`;
  }
  return stream;
}
