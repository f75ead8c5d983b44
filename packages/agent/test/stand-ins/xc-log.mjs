// `simctl spawn UDID log stream [--level L] [--style default|compact|json] [--predicate P]`: the unified log
// of the simulator from now on, until the follower is interrupted or the simulator shuts down. The device log
// is an append-only file of JSON records (apple-state.mjs logTo); this renders them as `log` does.
// Layout of the compact style ("2024-01-30 10:20:30.123 Df MyApp[1234:5678] [sub:cat] message") and its
// header line from `log(1)`'s output as published; not checked against a recording byte for byte.
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { applePaths, findSimulator } from "./apple-state.mjs";
import { unsupported } from "./xc-common.mjs";

const SHORT = { Default: "Df", Info: "I ", Debug: "Db", Error: "E ", Fault: "F " };
const LEVELS = ["default", "info", "debug"];

function size(file) {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

function stamp(at) {
  const d = new Date(at);
  const p = (n, w = 2) => String(n).padStart(w, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(
    d.getSeconds(),
  )}.${p(d.getMilliseconds(), 3)}`;
}

function render(entry, style) {
  const tid = (entry.pid * 7919) % 0xffff;
  const where = entry.subsystem ? ` [${entry.subsystem}:${entry.category}]` : "";
  if (style === "json") {
    return `${JSON.stringify({
      timestamp: `${stamp(entry.at)}000-0000`,
      messageType: entry.type,
      processID: entry.pid,
      processImagePath: `/Applications/${entry.process}.app/${entry.process}`,
      subsystem: entry.subsystem,
      category: entry.category,
      eventMessage: entry.message,
    })},`;
  }
  if (style === "compact") {
    return `${stamp(entry.at)} ${SHORT[entry.type] ?? "Df"} ${entry.process}[${entry.pid}:${tid.toString(16)}]${where} ${entry.message}`;
  }
  return `${stamp(entry.at)}-0000  0x${tid.toString(16)}    ${entry.type.padEnd(11)}0x0                  ${entry.pid}    0    ${entry.process}:${where} ${entry.message}`;
}

function readNew(file, offset) {
  const end = size(file);
  if (end <= offset) return { lines: [], next: offset };
  const fd = openSync(file, "r");
  try {
    const buffer = Buffer.alloc(end - offset);
    readSync(fd, buffer, 0, buffer.length, offset);
    const last = buffer.lastIndexOf(10);
    if (last < 0) return { lines: [], next: offset };
    const lines = buffer.subarray(0, last).toString("utf8").split("\n").filter(Boolean);
    return { lines, next: offset + last + 1 };
  } finally {
    closeSync(fd);
  }
}

export function followLog(sim, args) {
  let style = "default";
  let level = "default";
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--style") style = args[++i];
    else if (args[i].startsWith("--style=")) style = args[i].slice(8);
    else if (args[i] === "--level") level = args[++i];
    else if (args[i].startsWith("--level=")) level = args[i].slice(8);
    else if (args[i] === "--predicate") i++;
    else return Promise.resolve(unsupported("xcrun", `log stream ${args[i]}`));
  }
  if (!["default", "compact", "json"].includes(style))
    return Promise.resolve(unsupported("xcrun", `log style ${style}`));
  if (sim.state !== "Booted") {
    process.stderr.write(`Unable to lookup in current state: ${sim.state}\n`);
    return Promise.resolve(149);
  }
  const shown = new Set(["Default", "Error", "Fault"]);
  if (LEVELS.indexOf(level) >= 1) shown.add("Info");
  if (LEVELS.indexOf(level) >= 2) shown.add("Debug");
  const file = applePaths.log(sim.udid);
  // A stream shows what is logged from now on, not what was logged before it started.
  let offset = size(file);
  return new Promise((resolve) => {
    for (const signal of ["SIGINT", "SIGTERM"]) {
      process.once(signal, () => {
        clearInterval(tick);
        const last = readNew(file, offset);
        for (const line of last.lines) {
          const entry = JSON.parse(line);
          if (shown.has(entry.type)) process.stdout.write(`${render(entry, style)}\n`);
        }
        resolve(signal === "SIGINT" ? 0 : 143);
      });
    }
    // The header only once the signals are handled: a caller may stop the stream as soon as it sees it.
    if (style === "compact") process.stdout.write("Timestamp               Ty Process[PID:TID]\n");
    else if (style === "default") {
      process.stdout.write(
        "Timestamp                       Thread     Type        Activity             PID    TTL  \n",
      );
    } else process.stdout.write("[{\n");
    const tick = setInterval(() => {
      const next = readNew(file, offset);
      offset = next.next;
      for (const line of next.lines) {
        const entry = JSON.parse(line);
        if (shown.has(entry.type)) process.stdout.write(`${render(entry, style)}\n`);
      }
      if (findSimulator(sim.udid)?.state !== "Booted") {
        clearInterval(tick);
        resolve(0);
      }
    }, 15);
  });
}
