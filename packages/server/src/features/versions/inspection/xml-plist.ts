/**
 * Reads chosen keys of the top-level <dict> of an XML plist, or (readXmlPlistValue) the whole plist under a
 * budget, for an .xctestrun's nested targets.
 *
 * @xmldom/xmldom parses (it is what the `plist` package uses), but we call it ourselves: `plist` leaves xmldom
 * to print every parse problem to the console, which would put text from uploads on the server's stderr beside
 * the structured log. xmldom does not expand entities declared in a DTD and loads nothing external.
 */
import { DOMParser, type Element, type Node } from "@xmldom/xmldom";
import { type PlistBudget, type PlistValue, spend, spendChars } from "./plist-budget.ts";
import type { PlistScalar } from "./plist-scalar.ts";
import { reasonOf } from "./reason.ts";
import { UnsupportedBinaryError } from "./unsupported-binary-error.ts";

const ELEMENT_NODE = 1;

export function readXmlPlistKeys(buffer: Buffer, keys: ReadonlySet<string>): Map<string, PlistScalar> {
  const dict = topDict(parsePlist(buffer, "its Info.plist"), "its Info.plist");
  // A <dict> alternates <key> and value elements.
  const found = new Map<string, PlistScalar>();
  const items = elementChildren(dict);
  for (let i = 0; i + 1 < items.length; i += 2) {
    const key = items[i];
    const value = items[i + 1];
    if (key?.nodeName !== "key" || !value) {
      throw invalid("its Info.plist", "its top <dict> does not alternate <key> and value");
    }
    const name = key.textContent ?? "";
    if (keys.has(name) && !found.has(name)) found.set(name, scalar(value));
  }
  return found;
}

/**
 * The whole plist as values, every element counted against `budget` (plist-budget.ts); `what` names the file
 * in messages ("the .xctestrun").
 */
export function readXmlPlistValue(buffer: Buffer, what: string, budget: PlistBudget): PlistValue {
  const root = parsePlist(buffer, what);
  const top = elementChildren(root);
  if (top.length !== 1 || !top[0]) throw invalid(what, "its <plist> does not hold exactly one value");
  return plistValueOf(top[0], what, budget, 0);
}

function plistValueOf(element: Element, what: string, budget: PlistBudget, depth: number): PlistValue {
  spend(budget, depth, what);
  switch (element.nodeName) {
    case "array":
      return elementChildren(element).map((item) => plistValueOf(item, what, budget, depth + 1));
    case "dict": {
      const dict = new Map<string, PlistValue>();
      const items = elementChildren(element);
      if (items.length % 2 !== 0) throw invalid(what, "a <dict> does not alternate <key> and value");
      for (let i = 0; i < items.length; i += 2) {
        const key = items[i];
        const value = items[i + 1];
        if (key?.nodeName !== "key" || !value)
          throw invalid(what, "a <dict> does not alternate <key> and value");
        const name = key.textContent ?? "";
        spendChars(budget, name.length, what);
        const read = plistValueOf(value, what, budget, depth + 1);
        if (!dict.has(name)) dict.set(name, read);
      }
      return dict;
    }
    default: {
      const value = scalar(element);
      if (typeof value === "string") spendChars(budget, value.length, what);
      return value;
    }
  }
}

/** The <plist> element of a well-formed document; `what` names the file in messages. */
function parsePlist(buffer: Buffer, what: string): Element {
  const text = decode(buffer);
  // Without this, random bytes would be reported as whatever xmldom makes of them.
  if (!text.trimStart().startsWith("<"))
    throw invalid(what, "it is neither a binary plist (bplist00) nor XML");
  const problems: unknown[] = [];
  const parser = new DOMParser({
    locator: false,
    onError: (level, message) => {
      if (level !== "warning") problems.push(message);
    },
  });
  let root: Element | null;
  try {
    root = parser.parseFromString(text, "text/xml").documentElement;
  } catch (error) {
    problems.push(error);
    root = null;
  }
  if (problems.length > 0) throw invalid(what, `it is not well-formed XML (${reasonOf(problems[0])})`);
  if (root?.nodeName !== "plist") throw invalid(what, "its root element is not <plist>");
  return root;
}

function topDict(root: Element, what: string): Element {
  const dict = elementChildren(root)[0];
  if (dict?.nodeName !== "dict") throw invalid(what, "its top level is not a <dict>");
  return dict;
}

function scalar(element: Element): PlistScalar {
  const text = element.textContent ?? "";
  switch (element.nodeName) {
    case "string":
      return text;
    case "integer": {
      const value = Number(text.trim());
      return /^\s*[-+]?\d+\s*$/.test(text) && Number.isSafeInteger(value) ? value : null;
    }
    case "true":
      return true;
    case "false":
      return false;
    default:
      return null;
  }
}

function elementChildren(node: Node): Element[] {
  const elements: Element[] = [];
  for (let child = node.firstChild; child; child = child.nextSibling) {
    if (isElement(child)) elements.push(child);
  }
  return elements;
}

function isElement(node: Node): node is Element {
  return node.nodeType === ELEMENT_NODE;
}

/** Plists are UTF-8; a byte order mark may say UTF-16 instead. */
function decode(buffer: Buffer): string {
  if (buffer[0] === 0xfe && buffer[1] === 0xff) return new TextDecoder("utf-16be").decode(buffer);
  if (buffer[0] === 0xff && buffer[1] === 0xfe) return new TextDecoder("utf-16le").decode(buffer);
  return new TextDecoder("utf-8").decode(buffer);
}

function invalid(what: string, reason: string): UnsupportedBinaryError {
  return new UnsupportedBinaryError(`${what} is not a valid XML plist: ${reason}`);
}
