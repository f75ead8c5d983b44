/**
 * Runs ddmlib's InstrumentationResultParser live (through test/reference-parser/RefParse.java) on every
 * transcript fixture: its verdicts must equal the recorded <transcript>.reference.json files the unit test
 * relies on, and ours must agree with them. Needs java and ddmlib (Debian: libandroid-ddms-java, or
 * DDMLIB_JAR pointing at the jar); where they are missing only the recorded verdicts are checked.
 */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  expectedVerdict,
  fixtureName,
  ourVerdict,
  type ReferenceVerdict,
  referenceClasspath,
  referenceJsonPath,
  runReference,
  transcriptFiles,
} from "../../test/reference-parser/reference.ts";

const classpath = referenceClasspath();

describe("recorded reference verdicts", () => {
  it("exist for every transcript fixture", () => {
    const files = transcriptFiles();
    expect(files.length).toBeGreaterThanOrEqual(9);
    expect(files.filter((f) => !existsSync(referenceJsonPath(f))).map(fixtureName)).toEqual([]);
  });
});

if (classpath !== null) {
  describe("ddmlib InstrumentationResultParser, run live", () => {
    for (const file of transcriptFiles()) {
      const name = fixtureName(file);
      // The java launcher compiles RefParse.java on every run: seconds, not milliseconds.
      it(name, { timeout: 60_000 }, () => {
        const live = runReference(file, classpath);
        const recorded = JSON.parse(readFileSync(referenceJsonPath(file), "utf8")) as ReferenceVerdict;
        expect(live).toEqual(recorded);
        expect(ourVerdict(readFileSync(file, "utf8"))).toEqual(expectedVerdict(name, live));
      });
    }
  });
}
