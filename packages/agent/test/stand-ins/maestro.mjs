// `maestro [--device S] test [--format junit] [--output FILE] [-e K=V]... PATH`.
// Flow files: a config document (appId, optional name) then "---" and the command list
// (maestro.mobile.dev flow syntax). Commands that are modelled:
//   launchApp (appId from the config, a string, or {appId}) fails with maestro's
//   "Unable to launch app <appId>" when the app is not installed on the device (same state as adb);
//   assertVisible whose text starts with "FAIL" fails with 'Assertion is false: "<text>" is visible'
//   (a rule of this stand-in: there is no screen to look at); one whose text starts with "FAIL <n>x "
//   fails only on the flow's first n runs on that device (a flaky flow; runs counted in the device's
//   state by flow name, as adb counts test runs). Every other command passes.
// ${KEY} is replaced from -e KEY=VALUE everywhere in the flow text before parsing.
// Report: maestro's JUnitTestSuiteReporter layout (testsuites/testsuite name="Test Suite" device=…
// /testcase id name classname time status SUCCESS|ERROR with a <failure> text).
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, extname, join } from "node:path";
import { parseAllDocuments } from "yaml";
import { allDevices, deviceSleep, paths, readJson, writeJson } from "./state.mjs";

const STEP_MS = 100;

function flowFiles(target) {
  if (!existsSync(target)) return { error: `Flow path does not exist: ${target}` };
  if (statSync(target).isFile()) return { files: [target] };
  const files = readdirSync(target)
    .filter((f) => /\.ya?ml$/.test(f) && f !== "config.yaml")
    .sort()
    .map((f) => join(target, f));
  return { files };
}

function escapeXml(text) {
  return String(text)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}

function substitute(text, env) {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, key) => (key in env ? env[key] : whole));
}

async function runFlow(file, env, serial) {
  const started = Date.now();
  const docs = parseAllDocuments(substitute(readFileSync(file, "utf8"), env)).map((d) => d.toJS());
  const config = docs.length > 1 ? (docs[0] ?? {}) : {};
  const commands = (docs.length > 1 ? docs[1] : docs[0]) ?? [];
  const name = config.name ?? basename(file, extname(file));
  const installed = readJson(paths.packages(serial), {});
  const runs = readJson(paths.testRuns(serial), {});
  const run = runs[`flow:${name}`] ?? 0;
  writeJson(paths.testRuns(serial), { ...runs, [`flow:${name}`]: run + 1 });
  for (const command of commands) {
    const [kind, arg] = typeof command === "string" ? [command, undefined] : Object.entries(command)[0];
    await deviceSleep(STEP_MS, serial);
    if (kind === "launchApp") {
      const appId = typeof arg === "string" ? arg : (arg?.appId ?? config.appId);
      if (!installed[appId]) return { name, file, started, error: `Unable to launch app ${appId}` };
    } else if (kind === "assertVisible") {
      const text = typeof arg === "string" ? arg : (arg?.text ?? "");
      const flaky = /^FAIL (\d+)x /.exec(text);
      if (flaky ? run < Number(flaky[1]) : text.startsWith("FAIL"))
        return { name, file, started, error: `Assertion is false: "${text}" is visible` };
    }
  }
  return { name, file, started };
}

function seconds(ms) {
  return (ms / 1000).toFixed(3);
}

function iso(ms) {
  return new Date(ms).toISOString().slice(0, 19);
}

export async function maestro(argv) {
  let serial;
  let args = argv;
  if (args[0] === "--device" || args[0] === "--udid") {
    serial = args[1];
    args = args.slice(2);
  }
  if (args[0] !== "test") {
    process.stderr.write(`stand-in maestro: unsupported: ${argv.join(" ")}\n`);
    return 1;
  }
  let format;
  let output;
  let target;
  const env = {};
  for (let i = 1; i < args.length; i++) {
    const a = args[i];
    if (a === "--format") format = args[++i];
    else if (a === "--output") output = args[++i];
    else if (a === "-e" || a === "--env") {
      const [key, ...value] = args[++i].split("=");
      env[key] = value.join("=");
    } else if (a === "--device" || a === "--udid") serial = args[++i];
    else if (a.startsWith("-")) {
      process.stderr.write(`stand-in maestro: unsupported: option ${a}\n`);
      return 1;
    } else target = a;
  }
  if (format !== undefined && format.toLowerCase() !== "junit") {
    process.stderr.write(`stand-in maestro: unsupported: --format ${format}\n`);
    return 1;
  }
  const ready = allDevices().filter((d) => d.attached !== false && (d.state ?? "device") === "device");
  const device = serial === undefined ? ready[0] : ready.find((d) => d.serial === serial);
  if (!device) {
    process.stderr.write(
      serial === undefined
        ? "No connected devices found\n"
        : `Device ${serial} was requested, but it is not connected.\n`,
    );
    return 1;
  }
  if (!target) {
    process.stderr.write("Missing required parameter: '<flowFiles>'\n");
    return 2;
  }
  const found = flowFiles(target);
  if (found.error) {
    process.stderr.write(`${found.error}\n`);
    return 1;
  }
  const suiteStarted = Date.now();
  const results = [];
  for (const file of found.files) {
    const result = await runFlow(file, env, device.serial);
    result.ms = Date.now() - result.started;
    results.push(result);
    const status = result.error
      ? `[Failed] ${result.name} (${Math.round(result.ms / 1000)}s) (${result.error})`
      : `[Passed] ${result.name} (${Math.round(result.ms / 1000)}s)`;
    process.stdout.write(`${status}\n`);
  }
  const failed = results.filter((r) => r.error).length;
  process.stdout.write(
    failed > 0
      ? `\n${failed}/${results.length} ${failed === 1 ? "Flow" : "Flows"} Failed\n`
      : `\n${results.length}/${results.length} ${results.length === 1 ? "Flow" : "Flows"} Passed\n`,
  );
  if (output && format !== undefined) {
    const cases = results
      .map((r) => {
        const attrs = `id="${escapeXml(r.name)}" name="${escapeXml(r.name)}" classname="${escapeXml(r.name)}" file="${escapeXml(r.file)}" time="${seconds(r.ms)}" timestamp="${iso(r.started)}" status="${r.error ? "ERROR" : "SUCCESS"}"`;
        return r.error
          ? `    <testcase ${attrs}>\n      <failure>${escapeXml(r.error)}</failure>\n    </testcase>`
          : `    <testcase ${attrs}/>`;
      })
      .join("\n");
    writeFileSync(
      output,
      `<?xml version='1.0' encoding='UTF-8'?>\n<testsuites>\n  <testsuite name="Test Suite" device="${escapeXml(device.serial)}" tests="${results.length}" failures="${failed}" time="${seconds(Date.now() - suiteStarted)}" timestamp="${iso(suiteStarted)}">\n${cases}\n  </testsuite>\n</testsuites>\n`,
    );
  }
  return failed > 0 ? 1 : 0;
}
