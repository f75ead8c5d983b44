import { type Document, isMap, isScalar, LineCounter, parseDocument } from "yaml";
import { closestName } from "../cli/closest-name.ts";
import { displayPath, locate, type Position } from "../plans/locate.ts";
import { deviceKeys, type FlankSection, iosOnlyKeys, keysOf } from "./flank-keys.ts";

/** A problem or a note about the flank file, at its line and column. */
export interface FlankIssue extends Position {
  message: string;
}

/** `flank.yml:12:3: …`: the form editors and CI logs link up (as testbay.yaml's errors, plans/parse.ts). */
export function formatFlankIssue(fileName: string, issue: FlankIssue): string {
  return `${fileName}:${issue.line}:${issue.col}: ${issue.message}`;
}

/** The file cannot be run as it is: every problem found, and nothing has been sent. */
export class FlankFileError extends Error {
  override readonly name = "FlankFileError";
  constructor(
    readonly fileName: string,
    readonly issues: FlankIssue[],
  ) {
    super(issues.map((issue) => formatFlankIssue(fileName, issue)).join("\n"));
  }
}

/** One key's value as the file gives it, and where. */
export interface FlankValue {
  value: unknown;
  /** `gcloud.timeout`: how the messages name it. */
  name: string;
  segments: string[];
}

/** A flank.yml whose keys are all known: the values of its two sections, by Flank's current key names. */
export interface FlankFile {
  fileName: string;
  gcloud: Map<string, FlankValue>;
  flank: Map<string, FlankValue>;
  /** Keys read under their new name, one line each (renamed keys). */
  notes: FlankIssue[];
  /** Where a path into the file is (the key itself with `key`). */
  at(segments: string[], options?: { key?: boolean }): Position;
}

const sections: FlankSection[] = ["gcloud", "flank"];

/**
 * Reads a flank.yml and checks every key against Flank's documented configuration (flank-keys.ts): a key
 * outside it is an error at its line, with the closest documented key when one is near (a typo).
 */
export function readFlankFile(text: string, fileName: string): FlankFile {
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  if (document.errors.length > 0) {
    throw new FlankFileError(
      fileName,
      document.errors.map((error) => {
        const { line, col } = lines.linePos(error.pos[0]);
        return { line, col, message: `not valid YAML: ${(error.message.split("\n")[0] ?? "").trim()}` };
      }),
    );
  }
  const at = (segments: string[], options: { key?: boolean } = {}) =>
    locate(document, lines, segments, options);
  const issues: FlankIssue[] = [];
  const notes: FlankIssue[] = [];
  const root = document.contents;
  if (!isMap(root)) {
    throw new FlankFileError(fileName, [
      { line: 1, col: 1, message: "a flank file is a mapping with a gcloud: section (and a flank: section)" },
    ]);
  }
  const file: FlankFile = { fileName, gcloud: new Map(), flank: new Map(), notes, at };

  for (const key of keysOfMap(root)) {
    if (sections.includes(key as FlankSection)) continue;
    const near = closestName(key, sections);
    issues.push({
      ...at([key], { key: true }),
      message: `${key} is not a section of a flank file (gcloud: and flank: are)${near ? `: did you mean ${near}?` : ""}`,
    });
  }
  if (!root.has("gcloud")) {
    issues.push({ line: 1, col: 1, message: "gcloud: is missing: it names the app and the test APK" });
  }

  for (const section of sections) {
    const node = root.get(section, true);
    if (node === undefined || (isScalar(node) && node.value === null)) continue;
    if (!isMap(node)) {
      issues.push({ ...at([section]), message: `${section}: must be a mapping of keys` });
      continue;
    }
    readSection(document, section, node, file, issues);
  }
  const devices = file.gcloud.get("device");
  if (devices && Array.isArray(devices.value)) checkDeviceKeys(devices, file, issues);
  if (issues.length > 0) throw new FlankFileError(fileName, issues);
  return file;
}

function keysOfMap(node: { items: { key: unknown }[] }): string[] {
  return node.items.map((pair) => (isScalar(pair.key) ? String(pair.key.value) : String(pair.key)));
}

function readSection(
  document: Document,
  section: FlankSection,
  node: { items: { key: unknown }[] },
  file: FlankFile,
  issues: FlankIssue[],
): void {
  const known = keysOf(section);
  const values = document.toJS()[section] as Record<string, unknown>;
  for (const key of keysOfMap(node)) {
    const segments = [section, key];
    const meaning = Object.hasOwn(known, key) ? known[key] : undefined;
    if (!meaning) {
      issues.push({ ...file.at(segments, { key: true }), message: unknownKeyMessage(section, key) });
      continue;
    }
    const value: FlankValue = { value: values[key], name: `${section}.${key}`, segments };
    if (meaning.kind === "renamed") {
      file.notes.push({
        ...file.at(segments, { key: true }),
        message: `${section}.${key} is read as ${meaning.section}.${meaning.to} (Flank's current name for it)`,
      });
      const target = meaning.section === "gcloud" ? file.gcloud : file.flank;
      // The current name wins when the file has both.
      if (!target.has(meaning.to)) target.set(meaning.to, { ...value, name: `${section}.${key}` });
      continue;
    }
    (section === "gcloud" ? file.gcloud : file.flank).set(key, value);
  }
}

function unknownKeyMessage(section: FlankSection, key: string): string {
  if (iosOnlyKeys.has(key)) {
    return `${section}.${key} belongs to iOS flank files (flank ios run): testbay flank runs Android flank files (flank android run)`;
  }
  const other: FlankSection = section === "gcloud" ? "flank" : "gcloud";
  if (Object.hasOwn(keysOf(other), key)) {
    return `${section}.${key} is not a key of ${section}: it belongs in ${other}:`;
  }
  const near = closestName(key, Object.keys(keysOf(section)));
  return `${section}.${key} is not a key of Flank's configuration${near ? `: did you mean ${near}?` : ""} (docs/flank.md lists every key)`;
}

function checkDeviceKeys(devices: FlankValue, file: FlankFile, issues: FlankIssue[]): void {
  (devices.value as unknown[]).forEach((entry, i) => {
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
      issues.push({
        ...file.at([...devices.segments, String(i)]),
        message: `${displayPath([...devices.segments, String(i)])} must be a mapping (model:, version:, locale:, orientation:)`,
      });
      return;
    }
    for (const key of Object.keys(entry)) {
      if ((deviceKeys as readonly string[]).includes(key)) continue;
      const near = closestName(key, deviceKeys);
      issues.push({
        ...file.at([...devices.segments, String(i), key], { key: true }),
        message: `gcloud.device[${i}].${key} is not a device dimension (model, version, locale, orientation)${near ? `: did you mean ${near}?` : ""}`,
      });
    }
  });
}
