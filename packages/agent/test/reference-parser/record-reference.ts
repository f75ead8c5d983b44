/**
 * Regenerates the derived transcripts and, where ddmlib and java are present, the reference verdicts
 * (<transcript>.reference.json) that instrumentation-parser.test.ts checks our parser against without Java.
 *
 *   apt-get download libandroid-ddms-java && dpkg-deb -x libandroid-ddms-java_*_all.deb /tmp/ddm
 *   DDMLIB_JAR=/tmp/ddm/usr/share/java/com.android.tools.ddms.ddmlib.jar \
 *     npx tsx packages/agent/test/reference-parser/record-reference.ts
 *
 * (GUAVA_JAR defaults to Debian's /usr/share/java/guava.jar, from libguava-java.)
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  DERIVED_DIR,
  fixtureName,
  referenceClasspath,
  referenceJsonPath,
  runReference,
  TRANSCRIPTS_DIR,
  transcriptFiles,
} from "./reference.ts";

/** Splits a transcript after each INSTRUMENTATION_STATUS_CODE line; the last piece is the run's trailer. */
function statusBlocks(text: string): string[] {
  return text.split(/(?<=INSTRUMENTATION_STATUS_CODE: -?\d+\r?\n)/);
}

const recorded = (name: string) => readFileSync(join(TRANSCRIPTS_DIR, name), "utf8");

/**
 * Shapes no public recording was found for, made from recorded transcripts by moving or repeating whole
 * status blocks (never editing a line), so every byte still comes from a real run.
 */
const derivations: Record<string, () => string> = {
  // The first test's end arrives after the second test's start.
  "interleaved-from-adam-log_8.txt": () => {
    const [aStart, aEnd, bStart, bEnd, ...rest] = statusBlocks(recorded("adam-log_8-process-crashed.txt"));
    return [aStart, bStart, aEnd, bEnd, ...rest].join("");
  },
  // The runner sends the failing test's failure status a second time before the crash result.
  "repeated-failure-from-adam-log_8.txt": () => {
    const blocks = statusBlocks(recorded("adam-log_8-process-crashed.txt"));
    const failure = blocks.length - 2;
    return [...blocks.slice(0, failure + 1), blocks[failure], ...blocks.slice(failure + 1)].join("");
  },
  // numtests=3 announced, the third test's two blocks dropped, the run still ends with code -1.
  "fewer-than-announced-from-ddmlib.txt": () => {
    const blocks = statusBlocks(recorded("ddmlib-assumption-failures-ignored.txt"));
    return [...blocks.slice(0, 4), ...blocks.slice(6)].join("");
  },
};

mkdirSync(DERIVED_DIR, { recursive: true });
for (const [name, derive] of Object.entries(derivations)) writeFileSync(join(DERIVED_DIR, name), derive());

const classpath = referenceClasspath();
if (classpath === null) {
  console.log("ddmlib or java not found: derived transcripts written, reference verdicts left as they are");
} else {
  for (const file of transcriptFiles()) {
    const verdict = runReference(file, classpath);
    writeFileSync(referenceJsonPath(file), `${JSON.stringify(verdict, null, 2)}\n`);
    console.log(`${fixtureName(file)}: ${verdict.tests.length} tests, run failure: ${verdict.runFailure}`);
  }
}
