/**
 * Decodes an APK's AndroidManifest.xml (Android binary XML). The parsing is adbkit-apkreader's, which reads
 * values exactly as aapt wrote them (app-info-parser, for one, strips the "+" from "2.0.0-beta+7"); its output
 * is narrowed here into our own ManifestElement, so no other file sees the library's shapes.
 */
import BinaryXmlParser from "@devicefarmer/adbkit-apkreader/lib/apkreader/parser/binaryxml.js";
import { boundedBinaryXml } from "./binary-xml-guard.ts";
import {
  type AttributeValue,
  MANIFEST_DEPTH,
  type ManifestAttribute,
  type ManifestElement,
} from "./manifest-element.ts";
import { arrayOf, isRecord } from "./narrow.ts";
import { reasonOf } from "./reason.ts";
import { UnsupportedBinaryError } from "./unsupported-binary-error.ts";

/** The parser's node type for elements (text nodes use another). */
const ELEMENT_NODE = 1;

export function parseApkManifest(buffer: Buffer): ManifestElement {
  const xml = boundedBinaryXml(buffer);
  let document: unknown;
  try {
    document = new BinaryXmlParser(xml).parse();
  } catch (error) {
    throw new UnsupportedBinaryError(`its AndroidManifest.xml is not valid binary XML (${reasonOf(error)})`);
  }
  const root = toElement(document, 1);
  if (!root) throw new UnsupportedBinaryError("its AndroidManifest.xml holds no element");
  return root;
}

function toElement(node: unknown, depth: number): ManifestElement | null {
  if (!isRecord(node) || node.nodeType !== ELEMENT_NODE || typeof node.nodeName !== "string") return null;
  const attributes: ManifestAttribute[] = [];
  for (const attribute of arrayOf(node.attributes)) {
    if (!isRecord(attribute) || typeof attribute.name !== "string") continue;
    attributes.push({
      namespace: typeof attribute.namespaceURI === "string" ? attribute.namespaceURI : "",
      name: attribute.name,
      value: toValue(attribute.typedValue, attribute.value),
    });
  }
  const children: ManifestElement[] = [];
  if (depth < MANIFEST_DEPTH) {
    for (const child of arrayOf(node.childNodes)) {
      const element = toElement(child, depth + 1);
      if (element) children.push(element);
    }
  }
  return { name: node.nodeName, attributes, children };
}

/** `typed` is the parser's {type, value} for the compiled Res_value; `raw` the source string, when kept. */
function toValue(typed: unknown, raw: unknown): AttributeValue {
  const type = isRecord(typed) ? typed.type : undefined;
  const value = isRecord(typed) ? typed.value : undefined;
  if (type === "string" && typeof value === "string") return { kind: "string", value };
  if ((type === "int_dec" || type === "int_hex") && typeof value === "number") return { kind: "int", value };
  if (type === "boolean" && typeof value === "boolean") return { kind: "bool", value };
  if (type === "reference") return { kind: "reference" };
  if (typeof raw === "string") return { kind: "string", value: raw };
  return { kind: "other" };
}
