// @devicefarmer/adbkit-apkreader ships no types. We use only its binary XML parser, and we type its result as
// `unknown` on purpose: android-binary-xml.ts narrows it, so the library's shapes stay behind that file.
declare module "@devicefarmer/adbkit-apkreader/lib/apkreader/parser/binaryxml.js" {
  export default class BinaryXmlParser {
    constructor(buffer: Buffer);
    parse(): unknown;
  }
}
