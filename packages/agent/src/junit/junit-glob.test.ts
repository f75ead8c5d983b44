import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkJUnitPattern, findJUnitFiles } from "./junit-glob.ts";

describe("checkJUnitPattern", () => {
  it.each([
    "/etc/*.xml",
    "../reports/*.xml",
    "build/../../secrets/*.xml",
    "{..,build}/*.xml",
    "~/reports/*.xml",
    "C:/reports/*.xml",
    "..",
  ])("refuses %s", (pattern) => {
    expect(checkJUnitPattern(pattern)).toMatch(/junit pattern must/);
  });

  it.each(["build/test-results/**/*.xml", "reports/TEST-*.xml", "out/a..b.xml", "**/*.xml"])(
    "accepts %s",
    (pattern) => {
      expect(checkJUnitPattern(pattern)).toBeNull();
    },
  );
});

describe("findJUnitFiles", () => {
  let workDir: string;
  beforeEach(async () => {
    workDir = await mkdtemp(join(tmpdir(), "testbay-glob-"));
  });
  afterEach(() => rm(workDir, { recursive: true, force: true }));

  it("returns matching files under the work directory as sorted absolute paths", async () => {
    await mkdir(join(workDir, "build/test-results/unit"), { recursive: true });
    await mkdir(join(workDir, "build/test-results/dir.xml"), { recursive: true });
    await writeFile(join(workDir, "build/test-results/unit/TEST-b.xml"), "");
    await writeFile(join(workDir, "build/test-results/TEST-a.xml"), "");
    await writeFile(join(workDir, "build/test-results/notes.txt"), "");
    expect(await findJUnitFiles("build/test-results/**/*.xml", workDir)).toEqual([
      join(workDir, "build/test-results/TEST-a.xml"),
      join(workDir, "build/test-results/unit/TEST-b.xml"),
    ]);
  });
});
