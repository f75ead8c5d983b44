/**
 * XML property lists read and written back whole, as the xcuitest step needs for the .xctestrun it points at
 * the version's app (tested-app.ts): dictionaries keep their keys' order, and every value the step does not
 * change (integers, reals, dates, data) is written back as it was read. The format is Apple's DTD
 * (PropertyList-1.0.dtd: plist, dict of key/value pairs, array, string, integer, real, date, data, true,
 * false); `xcodebuild build-for-testing` writes .xctestrun files in it.
 */
import { XMLParser } from "fast-xml-parser";

/** A scalar other than a string or a boolean, kept as its element and text. */
export interface PlistScalar {
  readonly element: "integer" | "real" | "date" | "data";
  readonly text: string;
}

export type PlistValue = string | boolean | PlistScalar | PlistValue[] | PlistDict;
export type PlistDict = Map<string, PlistValue>;

type Node = Record<string, unknown>;

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: false,
  processEntities: true,
});

/** Reads an XML plist; a message saying what is wrong when it is not one. */
export function parseXmlPlist(text: string): { value: PlistValue } | { error: string } {
  if (text.startsWith("bplist")) return { error: "it is a binary plist, not XML" };
  let document: Node[];
  try {
    document = parser.parse(text) as Node[];
  } catch (error) {
    return { error: `it is not XML (${(error as Error).message})` };
  }
  const plist = document.find((node) => "plist" in node);
  const [root, ...more] = elements((plist?.plist as Node[] | undefined) ?? []);
  if (!root || more.length > 0) return { error: "it has no <plist> with one value" };
  try {
    return { value: readValue(root) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function elements(children: readonly Node[]): Node[] {
  return children.filter((child) => !("#text" in child) && !("#comment" in child));
}

function nameOf(node: Node): string {
  return Object.keys(node).find((key) => key !== ":@") ?? "";
}

function textOf(node: Node): string {
  return ((node[nameOf(node)] as Node[]) ?? []).map((child) => String(child["#text"] ?? "")).join("");
}

function readValue(node: Node): PlistValue {
  const name = nameOf(node);
  const children = (node[name] as Node[]) ?? [];
  switch (name) {
    case "string":
      return textOf(node);
    case "true":
      return true;
    case "false":
      return false;
    case "integer":
    case "real":
    case "date":
    case "data":
      return { element: name, text: textOf(node) };
    case "array":
      return elements(children).map(readValue);
    case "dict": {
      const dict: PlistDict = new Map();
      const items = elements(children);
      for (let i = 0; i < items.length; i += 2) {
        const key = items[i] as Node;
        const value = items[i + 1];
        if (nameOf(key) !== "key" || value === undefined)
          throw new Error("a <dict> has a key without a value");
        dict.set(textOf(key), readValue(value));
      }
      return dict;
    }
    default:
      throw new Error(`<${name}> is not a plist value`);
  }
}

const escapeXml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Writes a plist as Apple's tools do (tabs, one element a line). */
export function writeXmlPlist(value: PlistValue): string {
  const lines: string[] = [];
  const write = (v: PlistValue, pad: string) => {
    if (typeof v === "string") lines.push(`${pad}<string>${escapeXml(v)}</string>`);
    else if (typeof v === "boolean") lines.push(`${pad}<${v}/>`);
    else if (Array.isArray(v)) {
      if (v.length === 0) lines.push(`${pad}<array/>`);
      else {
        lines.push(`${pad}<array>`);
        for (const item of v) write(item, `${pad}\t`);
        lines.push(`${pad}</array>`);
      }
    } else if (v instanceof Map) {
      if (v.size === 0) lines.push(`${pad}<dict/>`);
      else {
        lines.push(`${pad}<dict>`);
        for (const [key, item] of v) {
          lines.push(`${pad}\t<key>${escapeXml(key)}</key>`);
          write(item, `${pad}\t`);
        }
        lines.push(`${pad}</dict>`);
      }
    } else lines.push(`${pad}<${v.element}>${escapeXml(v.text)}</${v.element}>`);
  };
  write(value, "");
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    ...lines,
    "</plist>",
    "",
  ].join("\n");
}
