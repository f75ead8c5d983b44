import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

/** Languages whose test classes live in a file named after the class. */
const sourceExtensions = [".kt", ".java", ".swift"];

/** Directories of build output, dependencies and tools: never where a test's source is. */
const skipped = new Set([
  ".git",
  "node_modules",
  "build",
  ".gradle",
  ".idea",
  "Pods",
  "DerivedData",
  "Carthage",
  ".build",
  ".testbay",
]);

/** Bounds the walk of a huge checkout: past it, the files not yet seen are not found (annotations still name the test). */
const maxEntries = 200_000;

/** Where a test's source is: a path relative to the repository's root (as annotations need it) and a line. */
export interface SourceLocation {
  path: string;
  line: number;
}

/**
 * The test sources under --source-root, indexed once by file name: a JVM class com.example.LoginTest is
 * LoginTest.kt or LoginTest.java (preferring the file under com/example/), an XCTest class MyAppUITests.LoginTests
 * is LoginTests.swift.
 */
export class SourceFiles {
  private index: Promise<Map<string, string[]>> | undefined;

  constructor(
    private readonly sourceRoot: string,
    private readonly repositoryRoot: string,
  ) {}

  private async walk(): Promise<Map<string, string[]>> {
    const byName = new Map<string, string[]>();
    const pending = [this.sourceRoot];
    let seen = 0;
    while (pending.length > 0 && seen < maxEntries) {
      const dir = pending.pop() as string;
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        seen++;
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) {
          if (!skipped.has(entry.name)) pending.push(full);
        } else if (entry.isFile() && sourceExtensions.includes(path.extname(entry.name))) {
          const list = byName.get(entry.name) ?? [];
          list.push(full);
          byName.set(entry.name, list);
        }
      }
    }
    return byName;
  }

  /** The file of a test's class, or undefined when none is under the source root. */
  async fileOf(classname: string): Promise<string | undefined> {
    this.index ??= this.walk();
    const index = await this.index;
    // Nested classes (Outer$Inner) live in their outer class's file.
    const outer = classname.split("$")[0] as string;
    const segments = outer.split(/[./]/).filter(Boolean);
    const simple = segments.at(-1);
    if (!simple) return undefined;
    const packagePath = segments.slice(0, -1).join("/");
    const candidates = sourceExtensions.flatMap((ext) => index.get(`${simple}${ext}`) ?? []);
    const inPackage = candidates.find((file) =>
      file
        .split(path.sep)
        .join("/")
        .endsWith(`${packagePath}/${path.basename(file)}`),
    );
    return inPackage ?? candidates.sort()[0];
  }

  /**
   * The test's file and line: the line its stack trace or message names in that file, else the line that
   * declares the test's method (`fun name(`, `void name(`, `func name(`), else the file's first line.
   */
  async locate(test: {
    classname: string;
    name: string;
    stack_trace: string | null;
    message: string | null;
  }): Promise<SourceLocation | undefined> {
    const file = await this.fileOf(test.classname);
    if (!file) return undefined;
    const relative = path.relative(this.repositoryRoot, file).split(path.sep).join("/");
    const base = path.basename(file);
    const named = new RegExp(`${base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:(\\d+)`).exec(
      `${test.stack_trace ?? ""}\n${test.message ?? ""}`,
    );
    if (named) return { path: relative, line: Number(named[1]) };
    const method = test.name.replace(/\(.*$/, "").replace(/\[.*$/, "");
    const text = await readFile(file, "utf8").catch(() => "");
    const declares = new RegExp(
      `\\b(?:fun|void|func)\\s+\`?${method.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`,
    );
    const index = text.split(/\r?\n/).findIndex((l) => declares.test(l));
    return { path: relative, line: index >= 0 ? index + 1 : 1 };
  }
}
