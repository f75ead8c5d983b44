/**
 * Reads what a result bundle says: its test cases (`xcresulttool get test-results tests`, Xcode 16+; the
 * legacy object graph when that command is refused, as by an older Xcode) and the attachments of its failed
 * tests (`xcresulttool export attachments --only-failures`: the screenshot XCUITest takes at a failure, and
 * any the test attached), as files with the tests they belong to.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { methodName } from "./test-identifiers.ts";
import { parseLegacyRoot, parseLegacyTests } from "./xcresult-legacy.ts";
import { type ParsedResults, parseTestResults } from "./xcresult-tests.ts";
import { lastLine, type XcodeTools } from "./xcrun.ts";

const readMs = 300_000;

export async function readTestResults(tools: XcodeTools, bundle: string): Promise<ParsedResults> {
  const current = await tools.xcrun(
    ["xcresulttool", "get", "test-results", "tests", "--path", bundle],
    readMs,
    "quiet",
  );
  if (current.ok) return parseTestResults(current.stdout.join("\n"));
  // Before Xcode 16 there is no test-results command; Xcode 16 wants --legacy for the old graph, older
  // releases do not know that flag.
  for (const legacy of [["--legacy"], []]) {
    const root = await tools.xcrun(
      ["xcresulttool", "get", ...legacy, "--format", "json", "--path", bundle],
      readMs,
      "quiet",
    );
    if (!root.ok) continue;
    const parsedRoot = parseLegacyRoot(root.stdout.join("\n"));
    if ("error" in parsedRoot) return parsedRoot;
    if (parsedRoot.testsRef === null) return { cases: [] };
    const tests = await tools.xcrun(
      ["xcresulttool", "get", ...legacy, "--format", "json", "--path", bundle, "--id", parsedRoot.testsRef],
      readMs,
      "quiet",
    );
    if (!tests.ok) return { error: `xcresulttool could not read the test summaries: ${lastLine(tests)}` };
    return parseLegacyTests(tests.stdout.join("\n"), parsedRoot);
  }
  return { error: `xcresulttool could not read the result bundle: ${lastLine(current)}` };
}

export interface ExportedAttachment {
  file: string;
  /** Its name as Xcode suggests it ("Screenshot at failure_0_….png"). */
  suggestedName: string | null;
  associatedWithFailure: boolean;
}

/** Attachments by test: the key is "Class#method" (the manifest names a test "Class/method()"). */
export type AttachmentsByTest = Map<string, ExportedAttachment[]>;

export function attachmentKey(className: string, method: string): string {
  return `${className}#${methodName(method)}`;
}

/** The manifest.json `export attachments` writes beside the files it exports. */
export function parseAttachmentsManifest(text: string, dir: string): AttachmentsByTest {
  const byTest: AttachmentsByTest = new Map();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return byTest;
  }
  if (!Array.isArray(json)) return byTest;
  for (const entry of json as Array<{ testIdentifier?: unknown; attachments?: unknown }>) {
    if (typeof entry?.testIdentifier !== "string" || !Array.isArray(entry.attachments)) continue;
    const parts = entry.testIdentifier.split("/").filter((p) => p !== "");
    if (parts.length < 2) continue;
    const key = attachmentKey(parts.at(-2) as string, parts.at(-1) as string);
    for (const attachment of entry.attachments as Array<Record<string, unknown>>) {
      if (typeof attachment.exportedFileName !== "string") continue;
      // Names come from the bundle: never let one point outside the export folder.
      const file = path.join(dir, path.basename(attachment.exportedFileName));
      byTest.set(key, [
        ...(byTest.get(key) ?? []),
        {
          file,
          suggestedName:
            typeof attachment.suggestedHumanReadableName === "string"
              ? attachment.suggestedHumanReadableName
              : null,
          associatedWithFailure: attachment.isAssociatedWithFailure === true,
        },
      ]);
    }
  }
  return byTest;
}

/** Exports the failed tests' attachments into `dir`; an empty map (and a log line) when it cannot. */
export async function exportFailureAttachments(
  tools: XcodeTools,
  bundle: string,
  dir: string,
  log: (line: string) => void,
): Promise<AttachmentsByTest> {
  const exported = await tools.xcrun(
    ["xcresulttool", "export", "attachments", "--path", bundle, "--output-path", dir, "--only-failures"],
    readMs,
    "quiet",
  );
  if (!exported.ok) {
    log(`attachments not exported (xcresulttool export attachments needs Xcode 16): ${lastLine(exported)}`);
    return new Map();
  }
  try {
    return parseAttachmentsManifest(await readFile(path.join(dir, "manifest.json"), "utf8"), dir);
  } catch (error) {
    log(`attachments exported without a manifest: ${(error as Error).message}`);
    return new Map();
  }
}
