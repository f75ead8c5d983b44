/**
 * Decodes an AAB's base/manifest/AndroidManifest.xml: an `aapt.pb.XmlNode` protobuf, not binary XML.
 */
import protobuf from "protobufjs";
import {
  type AttributeValue,
  MANIFEST_DEPTH,
  type ManifestAttribute,
  type ManifestElement,
} from "./manifest-element.ts";
import { arrayOf, isRecord } from "./narrow.ts";
import { reasonOf } from "./reason.ts";
import { UnsupportedBinaryError } from "./unsupported-binary-error.ts";

/**
 * The slice of AOSP frameworks/base/tools/aapt2/Resources.proto that a manifest needs, with its field numbers
 * unchanged. Fields left out (source positions, namespace declarations, resource ids, other value kinds) are
 * skipped by the decoder as unknown fields.
 */
const SCHEMA = `
syntax = "proto3";
package aapt.pb;

message XmlNode {
  oneof node {
    XmlElement element = 1;
    string text = 2;
  }
}

message XmlElement {
  string namespace_uri = 2;
  string name = 3;
  repeated XmlAttribute attribute = 4;
  repeated XmlNode child = 5;
}

message XmlAttribute {
  string namespace_uri = 1;
  string name = 2;
  string value = 3;
  Item compiled_item = 6;
}

message Item {
  oneof value {
    Reference ref = 1;
    String str = 2;
    Primitive prim = 7;
  }
}

message Reference {
  uint32 id = 2;
}

message String {
  string value = 1;
}

message Primitive {
  oneof oneof_value {
    int32 int_decimal_value = 6;
    uint32 int_hexadecimal_value = 7;
    bool boolean_value = 8;
  }
}
`;

const XmlNode = protobuf.parse(SCHEMA, { keepCase: true }).root.lookupType("aapt.pb.XmlNode");

export function parseAabManifest(buffer: Buffer): ManifestElement {
  let node: unknown;
  try {
    node = XmlNode.toObject(XmlNode.decode(buffer), { defaults: false });
  } catch (error) {
    throw new UnsupportedBinaryError(
      `its base/manifest/AndroidManifest.xml is not an aapt2 XmlNode (${reasonOf(error)})`,
    );
  }
  const root = isRecord(node) ? toElement(node.element, 1) : null;
  if (!root) throw new UnsupportedBinaryError("its base/manifest/AndroidManifest.xml holds no element");
  return root;
}

function toElement(element: unknown, depth: number): ManifestElement | null {
  if (!isRecord(element) || typeof element.name !== "string") return null;
  const attributes: ManifestAttribute[] = [];
  for (const attribute of arrayOf(element.attribute)) {
    if (!isRecord(attribute) || typeof attribute.name !== "string") continue;
    attributes.push({
      namespace: typeof attribute.namespace_uri === "string" ? attribute.namespace_uri : "",
      name: attribute.name,
      value: toValue(attribute),
    });
  }
  const children: ManifestElement[] = [];
  if (depth < MANIFEST_DEPTH) {
    for (const child of arrayOf(element.child)) {
      const childElement = isRecord(child) ? toElement(child.element, depth + 1) : null;
      if (childElement) children.push(childElement);
    }
  }
  return { name: element.name, attributes, children };
}

/**
 * aapt2 keeps the source text in `value` beside the compiled item. The text is what the developer wrote
 * ("2.0.0-beta+7", "456"), so it wins; the compiled primitive is the fallback, and a compiled reference
 * (`@string/app_name`) stays a reference whatever its text.
 */
function toValue(attribute: Record<string, unknown>): AttributeValue {
  const item = isRecord(attribute.compiled_item) ? attribute.compiled_item : {};
  if (isRecord(item.ref)) return { kind: "reference" };
  if (typeof attribute.value === "string" && attribute.value !== "")
    return { kind: "string", value: attribute.value };
  const prim = isRecord(item.prim) ? item.prim : {};
  if (typeof prim.int_decimal_value === "number") return { kind: "int", value: prim.int_decimal_value };
  if (typeof prim.int_hexadecimal_value === "number")
    return { kind: "int", value: prim.int_hexadecimal_value };
  if (typeof prim.boolean_value === "boolean") return { kind: "bool", value: prim.boolean_value };
  if (isRecord(item.str) && typeof item.str.value === "string")
    return { kind: "string", value: item.str.value };
  return { kind: "other" };
}
