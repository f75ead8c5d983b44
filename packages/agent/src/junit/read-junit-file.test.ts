import { mkdtemp, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_JUNIT_BYTES } from "./parse-junit.ts";
import { readJUnitFile } from "./read-junit-file.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "testbay-junit-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("readJUnitFile", () => {
  it("parses a report from disk", async () => {
    const file = join(dir, "TEST-a.xml");
    await writeFile(file, `<testsuite><testcase classname="A" name="b"/></testsuite>`);
    expect(await readJUnitFile(file)).toMatchObject({ ok: true, testCases: [{ classname: "A", name: "b" }] });
  });

  it("refuses a file over 50 MiB from its size alone", async () => {
    const file = join(dir, "huge.xml");
    await writeFile(file, "");
    await truncate(file, MAX_JUNIT_BYTES + 1024 * 1024); // sparse: nothing is written or read
    expect(await readJUnitFile(file)).toEqual({
      ok: false,
      error: "report is 51 MiB, over the 50 MiB limit",
    });
  });

  it("turns a missing file into an error value", async () => {
    const result = await readJUnitFile(join(dir, "missing.xml"));
    expect(result).toMatchObject({ ok: false, error: expect.stringContaining("could not read: ENOENT") });
  });
});
