import type { TestPackageContent } from "./test-packages.repo.ts";

/**
 * A test package's format told from what was read from it, for callers that hold only the stored `test`
 * (a claimed job's row): the two shapes share no field, an .xctestrun's always has `xctestrun`.
 */
export function testPackageContent(test: unknown): TestPackageContent {
  if (typeof test === "object" && test !== null && "xctestrun" in test) {
    return { format: "xctest", test: test as Extract<TestPackageContent, { format: "xctest" }>["test"] };
  }
  return { format: "apk", test: test as Extract<TestPackageContent, { format: "apk" }>["test"] };
}
