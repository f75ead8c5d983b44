/**
 * Reads chosen keys of the top-level <dict> of an XML plist.
 *
 * @xmldom/xmldom parses (it is what the `plist` package uses), but we call it ourselves: `plist` leaves xmldom
 * to print every parse problem to the console, which would put text from uploads on the server's stderr beside
 * the structured log. xmldom does not expand entities declared in a DTD and loads nothing external.
 */
import { DOMParser, type Element, type Node } from "@xmldom/xmldom";
import type { PlistScalar } from "./plist-scalar.ts";
import { reasonOf } from "./reason.ts";
import { UnsupportedBinaryError } from "./unsupported-binary-error.ts";

const ELEMENT_NODE = 1;

export function readXmlPlistKeys(buffer: Buffer, keys: ReadonlySet<string>): Map<string, PlistScalar> {
  const text = decode(buffer);
  // Without this, random bytes would be reported as whatever xmldom makes of them.
  if (!text.trimStart().startsWith("<")) throw invalid("it is neither a binary plist (bplist00) nor XML");
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
  if (problems.length > 0) throw invalid(`it is not well-formed XML (${reasonOf(problems[0])})`);
  if (root?.nodeName !== "plist") throw invalid("its root element is not <plist>");
  const dict = elementChildren(root)[0];
  if (dict?.nodeName !== "dict") throw invalid("its top level is not a <dict>");

  // A <dict> alternates <key> and value elements.
  const found = new Map<string, PlistScalar>();
  const items = elementChildren(dict);
  for (let i = 0; i + 1 < items.length; i += 2) {
    const key = items[i];
    const value = items[i + 1];
    if (key?.nodeName !== "key" || !value) throw invalid("its top <dict> does not alternate <key> and value");
    const name = key.textContent ?? "";
    if (keys.has(name) && !found.has(name)) found.set(name, scalar(value));
  }
  return found;
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

function invalid(reason: string): UnsupportedBinaryError {
  return new UnsupportedBinaryError(`its Info.plist is not a valid XML plist: ${reason}`);
}
