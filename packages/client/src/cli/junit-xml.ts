import { XMLBuilder, XMLParser, XMLValidator } from "fast-xml-parser";

/**
 * An XML element as fast-xml-parser reads and writes it in its preserveOrder form: the one key other than ":@"
 * is the tag and holds the children in document order; ":@" holds the attributes. A text node is
 * `{ "#text": value }`.
 */
export type XmlNode = { [tagOrAttributes: string]: unknown };
type Attributes = Record<string, string | number>;

export function element(tag: string, attributes: Attributes = {}, children: XmlNode[] = []): XmlNode {
  return { [tag]: children, ":@": attributes };
}

export function tagOf(node: XmlNode): string {
  return Object.keys(node).find((key) => key !== ":@") ?? "";
}

export function childrenOf(node: XmlNode): XmlNode[] {
  const children = node[tagOf(node)];
  return Array.isArray(children) ? children : [];
}

export function attributeOf(node: XmlNode, name: string): string | undefined {
  const value = (node[":@"] as Attributes | undefined)?.[name];
  return value === undefined ? undefined : String(value);
}

export function withAttribute(node: XmlNode, name: string, value: string): XmlNode {
  return { ...node, ":@": { ...(node[":@"] as Attributes | undefined), [name]: value } };
}

const isText = (node: XmlNode) => tagOf(node) === "#text";
const isWhitespace = (value: unknown) =>
  [...String(value)].every((c) => c === " " || c === "\t" || c === "\n" || c === "\r");

/**
 * The element without the line breaks and indentation between its child elements (recursively), which the
 * writer puts back at its own depth; text of an element without child elements (a stack trace) is kept whole.
 */
export function withoutIndentation(node: XmlNode): XmlNode {
  if (isText(node)) return node;
  const children = childrenOf(node);
  if (!children.some((child) => !isText(child))) return node;
  const kept = children.filter((child) => !(isText(child) && isWhitespace(child["#text"])));
  return { ...node, [tagOf(node)]: kept.map(withoutIndentation) };
}

const reader = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "",
  parseTagValue: false,
  parseAttributeValue: false,
  // A failure's text (a stack trace) keeps its first and last lines as they were.
  trimValues: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  // fast-xml-parser 5 decodes character references (the &#10; of a multi-line failure message, see
  // packages/server/src/features/executions/junit-report.ts) only with this on; the server writes no HTML
  // entity name, every & it writes is &amp;.
  htmlEntities: true,
});

/** The elements of a well-formed XML document; undefined for anything else (an empty or cut-off answer). */
export function readXml(document: string): XmlNode[] | undefined {
  if (XMLValidator.validate(document) !== true) return undefined;
  return reader.parse(document) as XmlNode[];
}

/** XML 1.0 allows tab, line feed and carriage return, and no other character below U+0020. */
const allowedInXml = (c: string) => c.charCodeAt(0) >= 0x20 || c === "\t" || c === "\n" || c === "\r";

const inText: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };
/**
 * In an attribute value XML parsers turn a literal line break or tab into a space (attribute-value
 * normalization), so a multi-line failure message would reach other JUnit tools as one line; as character
 * references they survive. With processEntities off the builder escapes nothing itself but ' (as &apos;).
 */
const inAttribute: Record<string, string> = {
  ...inText,
  '"': "&quot;",
  "\n": "&#10;",
  "\r": "&#13;",
  "\t": "&#9;",
};

function escaped(value: unknown, references: Record<string, string>): string {
  let out = "";
  for (const c of String(value)) {
    if (allowedInXml(c)) out += references[c] ?? c;
  }
  return out;
}

const writer = new XMLBuilder({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "",
  format: true,
  indentBy: "  ",
  suppressEmptyNode: true,
  suppressBooleanAttributes: false,
  processEntities: false,
  // Text is escaped whole, > too: the builder takes element content that ends in ">" or holds "/>" for child
  // elements and indents around it, which would change a text that did.
  tagValueProcessor: (_name, value) => escaped(value, inText),
  attributeValueProcessor: (_name, value) => escaped(value, inAttribute),
});

/** A document with an XML 1.0 declaration, indented by two spaces, ending with a line break. */
export function writeXml(root: XmlNode): string {
  return `${writer.build([element("?xml", { version: "1.0", encoding: "UTF-8" }), root])}\n`;
}
