/**
 * Reads JUnit XML reports as written by Surefire, Gradle, Maestro, pytest and most other tools: a
 * <testsuites> root or a lone <testsuite>, suites possibly nested, each <testcase> with an optional
 * <failure>, <error> or <skipped> child and <system-out>/<system-err>. A bad report never throws: the
 * caller gets an error value to turn into a log line and an errored step.
 */
import { XMLParser, XMLValidator } from "fast-xml-parser";
import type { TestCase, TestCaseStatus } from "../steps/step-types.ts";
import { messageBeforeStack, testMessage } from "../steps/test-message.ts";
import { decodeXmlEntities } from "./xml-entities.ts";

export type JUnitParseResult = { ok: true; testCases: TestCase[] } | { ok: false; error: string };

/** Reports larger than this are refused unread; real ones are a few MB at most. */
export const MAX_JUNIT_BYTES = 50 * 1024 * 1024;

/** One test's text is cut here: a test that printed megabytes must not swamp the results sent on. */
export const MAX_DETAILS_CHARS = 64 * 1024;

// Tags that may repeat; always arrays so a report with one test case reads like one with many.
const REPEATED = new Set(["testsuites", "testsuite", "testcase", "failure", "error", "skipped"]);
const REPEATED_TEXT = new Set(["system-out", "system-err"]);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  // Off: DOCTYPE entities are never expanded; the predefined ones are decoded by decodeXmlEntities.
  processEntities: false,
  htmlEntities: false,
  cdataPropName: "#cdata",
  parseTagValue: false,
  parseAttributeValue: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  isArray: (tagName, _path, _isLeaf, isAttribute) =>
    !isAttribute && (REPEATED.has(tagName) || REPEATED_TEXT.has(tagName)),
});

type XmlNode = string | { [key: string]: unknown };

export function parseJUnit(xml: string): JUnitParseResult {
  const bytes = Buffer.byteLength(xml);
  if (bytes > MAX_JUNIT_BYTES) return { ok: false, error: oversizeError(bytes) };
  const text = xml.startsWith("\uFEFF") ? xml.slice(1) : xml;
  const valid = XMLValidator.validate(text);
  if (valid !== true) {
    return { ok: false, error: `not well-formed XML: ${valid.err.msg} (line ${valid.err.line})` };
  }
  let document: Record<string, unknown>;
  try {
    document = parser.parse(text) as Record<string, unknown>;
  } catch (error) {
    return { ok: false, error: `could not parse XML: ${(error as Error).message}` };
  }
  const roots = [...children(document, "testsuites"), ...children(document, "testsuite")];
  if (roots.length === 0) return { ok: false, error: "no <testsuites> or <testsuite> root element" };
  const testCases: TestCase[] = [];
  for (const root of roots) collectSuite(root, "", testCases);
  return { ok: true, testCases };
}

/** Walks a suite (or the <testsuites> wrapper) and the suites nested in it. */
function collectSuite(suite: XmlNode, suiteName: string, into: TestCase[]): void {
  const name = attr(suite, "name") ?? suiteName;
  for (const testcase of children(suite, "testcase")) into.push(toTestCase(testcase, name));
  for (const nested of children(suite, "testsuite")) collectSuite(nested, name, into);
}

function toTestCase(node: XmlNode, suiteName: string): TestCase {
  const [outcome] = [
    ...children(node, "failure").map((n) => ({ status: "failed" as TestCaseStatus, node: n })),
    ...children(node, "error").map((n) => ({ status: "errored" as TestCaseStatus, node: n })),
    ...children(node, "skipped").map((n) => ({ status: "skipped" as TestCaseStatus, node: n })),
  ];
  const body = outcome ? textOf(outcome.node) : "";
  const output = [
    body,
    section("system-out", children(node, "system-out").map(textOf).join("\n")),
    section("system-err", children(node, "system-err").map(textOf).join("\n")),
  ].filter((part) => part !== "");
  return {
    classname: attr(node, "classname") ?? attr(node, "class") ?? suiteName,
    name: attr(node, "name") ?? "(unnamed)",
    status: outcome?.status ?? "passed",
    duration_ms: seconds(attr(node, "time")),
    // The whole message (testMessage), lines kept: writers put multi-line assertion diffs and launch failures
    // whose cause follows a generic first line there. Without the attribute, the body's text up to its stack.
    message: outcome
      ? (testMessage(attr(outcome.node, "message")) ?? testMessage(messageBeforeStack(body)))
      : null,
    details: output.length === 0 ? null : cap(output.join("\n")),
  };
}

function children(node: unknown, tag: string): XmlNode[] {
  if (typeof node !== "object" || node === null) return [];
  const value = (node as Record<string, unknown>)[tag];
  return Array.isArray(value) ? (value as XmlNode[]) : [];
}

function attr(node: XmlNode, name: string): string | undefined {
  if (typeof node === "string") return undefined;
  const value = node[`@_${name}`];
  return typeof value === "string" ? decodeXmlEntities(value) : undefined;
}

/** Element text: escaped text decoded, CDATA taken as is. */
function textOf(node: XmlNode): string {
  if (typeof node === "string") return decodeXmlEntities(node).trim();
  const text = typeof node["#text"] === "string" ? decodeXmlEntities(node["#text"]) : "";
  const cdata = node["#cdata"];
  const raw = Array.isArray(cdata) ? cdata.join("") : typeof cdata === "string" ? cdata : "";
  return (text + raw).trim();
}

function section(title: string, text: string): string {
  return text === "" ? "" : `--- ${title} ---\n${text}`;
}

/** JUnit times are seconds, sometimes with thousands separators ("1,234.5"). */
function seconds(time: string | undefined): number | null {
  if (time === undefined) return null;
  const value = Number.parseFloat(time.replace(/,/g, ""));
  return Number.isFinite(value) && value >= 0 ? Math.round(value * 1000) : null;
}

function cap(text: string): string {
  return text.length <= MAX_DETAILS_CHARS ? text : `${text.slice(0, MAX_DETAILS_CHARS)}\n… (truncated)`;
}

/** The error for a report over MAX_JUNIT_BYTES. */
export function oversizeError(bytes: number): string {
  const mib = (n: number) => Number((n / (1024 * 1024)).toFixed(1));
  return `report is ${mib(bytes)} MiB, over the ${mib(MAX_JUNIT_BYTES)} MiB limit`;
}
