/**
 * Decodes the character references XML defines by itself: the five predefined entities and numeric
 * references. The JUnit parser runs with entity processing off (no DOCTYPE-declared entity is ever
 * expanded, so no "billion laughs"), which leaves these for us to decode.
 */

const PREDEFINED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

// One pass over the text, so "&amp;lt;" becomes "&lt;" and is not decoded a second time.
const REFERENCE = /&(lt|gt|amp|quot|apos|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});/g;

export function decodeXmlEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(REFERENCE, (whole, ref: string) => {
    if (!ref.startsWith("#")) return PREDEFINED[ref] ?? whole;
    const code = ref[1] === "x" ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}
