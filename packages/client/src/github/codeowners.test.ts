// CODEOWNERS read as GitHub reads it (its documented examples): gitignore-style patterns, anchored when they
// hold a slash, directories matching what is under them, `docs/*` one level only, the last matching line wins,
// a line without owners unsets them.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ownersOf, parseCodeowners, patternMatcher, readCodeowners } from "./codeowners.ts";

describe("patternMatcher", () => {
  const cases: Array<[string, string, boolean]> = [
    ["*", "any/file.kt", true],
    ["*.js", "src/deep/app.js", true],
    ["*.js", "src/deep/app.jsx", false],
    ["/build/logs/", "build/logs/a/b.txt", true],
    ["/build/logs/", "x/build/logs/a.txt", false],
    ["docs/*", "docs/getting-started.md", true],
    ["docs/*", "docs/build-app/troubleshooting.md", false],
    ["apps/", "apps/a.kt", true],
    ["apps/", "deep/apps/b/c.kt", true],
    ["apps/", "apps", false],
    ["/docs/", "docs/x/y.md", true],
    ["/scripts/", "src/scripts/x.sh", false],
    ["**/logs", "build/logs/x.txt", true],
    ["**/logs", "deeply/nested/logs/y", true],
    ["**/logs", "logs/z", true],
    ["/apps/github", "apps/github/x.kt", true],
    ["/apps/github", "apps/githubx/x.kt", false],
    ["app/**/test", "app/a/b/test/T.kt", true],
    ["app/**/test", "app/test/T.kt", true],
    ["src/*.java", "src/A.java", true],
    ["src/*.java", "src/x/A.java", false],
    ["LoginTest.kt", "app/src/LoginTest.kt", true],
    ["Login?est.kt", "LoginTest.kt", true],
  ];
  it.each(cases)("%s on %s: %s", (pattern, file, expected) => {
    expect(patternMatcher(pattern)(file)).toBe(expected);
  });
});

describe("ownersOf", () => {
  const rules = parseCodeowners(
    [
      "# This is a comment",
      "*       @global-owner1 @global-owner2",
      "*.kt    @kotlin-owner   # trailing comment",
      "/app/src/login/   @login-team",
      "/app/src/login/generated/",
      "\\#notes.md  @notes",
      "!never.kt @nobody",
    ].join("\n"),
  );

  it("takes the last matching line, and no owners from a line that names none", () => {
    expect(ownersOf(rules, "README.md")).toEqual(["@global-owner1", "@global-owner2"]);
    expect(ownersOf(rules, "app/src/cart/CartTest.kt")).toEqual(["@kotlin-owner"]);
    expect(ownersOf(rules, "app/src/login/LoginTest.kt")).toEqual(["@login-team"]);
    expect(ownersOf(rules, "app/src/login/generated/R.kt")).toEqual([]);
    expect(ownersOf(rules, "#notes.md")).toEqual(["@notes"]);
    expect(ownersOf(rules, "never.kt")).toEqual(["@kotlin-owner"]);
  });

  it("reads the first of .github/, the root and docs/ that has the file", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "testbay-codeowners-"));
    try {
      expect(await readCodeowners(dir)).toEqual([]);
      await mkdir(path.join(dir, "docs"));
      await writeFile(path.join(dir, "docs/CODEOWNERS"), "* @docs\n");
      expect(ownersOf(await readCodeowners(dir), "a.kt")).toEqual(["@docs"]);
      await writeFile(path.join(dir, "CODEOWNERS"), "* @root\n");
      expect(ownersOf(await readCodeowners(dir), "a.kt")).toEqual(["@root"]);
      await mkdir(path.join(dir, ".github"));
      await writeFile(path.join(dir, ".github/CODEOWNERS"), "* @github\n");
      expect(ownersOf(await readCodeowners(dir), "a.kt")).toEqual(["@github"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
