/**
 * Cuts a run's logcat into the part each test wrote. AndroidJUnitRunner logs `TestRunner: started:
 * name(class)` before a test and `TestRunner: finished: name(class)` after it (the device's own markers, so
 * no clock has to agree with the host's); a test that crashed the process has no `finished`, and its part
 * runs to the next `started` or the end of the log, which is where the crash is.
 */
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";

const marker = /\bTestRunner\s*: (started|finished): (.*)$/;

/** The test a marker line names: "signsIn(com.example.LoginTest)" → the class is in the last parentheses. */
function markedTest(line: string): { event: "started" | "finished"; key: string } | null {
  const match = marker.exec(line);
  if (!match) return null;
  const text = (match[2] ?? "").trim();
  const open = text.lastIndexOf("(");
  if (open <= 0 || !text.endsWith(")")) return null;
  const name = text.slice(0, open);
  const classname = text.slice(open + 1, -1);
  return { event: match[1] as "started" | "finished", key: testKey(classname, name) };
}

export function testKey(classname: string, name: string): string {
  return `${classname}#${name}`;
}

/** Keeps at most this many lines per test: a test that logs in a loop must not make a huge artifact. */
const maxLinesPerTest = 20_000;

/** The lines of each wanted test (by testKey), in order, markers included; its last run when it ran more than once. */
export async function cutLogcat(file: string, wanted: ReadonlySet<string>): Promise<Map<string, string[]>> {
  const runs = await cutLogcatRuns(file, wanted);
  return new Map([...runs].map(([key, each]) => [key, each.at(-1) ?? []]));
}

/**
 * The lines of each run of each wanted test, in the order they ran: a test rerun alone (retry_failed_tests)
 * has its `started` marker once per run, and each run's part is its own.
 */
export async function cutLogcatRuns(
  file: string,
  wanted: ReadonlySet<string>,
): Promise<Map<string, string[][]>> {
  const parts = new Map<string, string[][]>();
  if (wanted.size === 0) return parts;
  let current: string[] | null = null;
  const lines = createInterface({
    input: createReadStream(file, "utf8"),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  for await (const line of lines) {
    const mark = markedTest(line);
    if (mark?.event === "started") {
      current = wanted.has(mark.key) ? [] : null;
      if (current) parts.set(mark.key, [...(parts.get(mark.key) ?? []), current]);
    }
    if (current && current.length < maxLinesPerTest) current.push(line);
    if (mark?.event === "finished") current = null;
  }
  return parts;
}
