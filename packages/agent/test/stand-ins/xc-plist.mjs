// XML property lists (Apple's PropertyList-1.0 DTD), read and written: the xctestrun files xcodebuild reads
// and the Info.plist of every .app and .xctest bundle. Binary plists are not read by the stand-ins (the
// helpers in apple-lab.ts write XML, which Xcode accepts everywhere); one is refused with the error below.

const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decodeEntities(text) {
  return text.replace(/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/g, (_, e) => {
    if (e.startsWith("#x")) return String.fromCodePoint(Number.parseInt(e.slice(2), 16));
    if (e.startsWith("#")) return String.fromCodePoint(Number.parseInt(e.slice(1), 10));
    return ENTITIES[e];
  });
}

function encodeEntities(text) {
  return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Parses an XML plist into plain values (dict → object, array → array, integer/real → number, date → Date). */
export function parsePlist(text) {
  if (typeof text !== "string") text = text.toString("utf8");
  if (text.startsWith("bplist")) throw new Error("binary property lists are not read by the stand-in");
  const tokens = [];
  const re = /<(\/?)([A-Za-z]+)(\s[^>]*)?(\/?)>|<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!DOCTYPE[^>]*>|([^<]+)/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m[2]) tokens.push({ close: m[1] === "/", name: m[2], empty: m[4] === "/" });
    else if (m[5] !== undefined) tokens.push({ text: m[5] });
  }
  let i = 0;
  const skipSpace = () => {
    while (i < tokens.length && tokens[i].text !== undefined && tokens[i].text.trim() === "") i++;
  };
  const textUntil = (name) => {
    let out = "";
    while (i < tokens.length && !(tokens[i].close && tokens[i].name === name)) {
      if (tokens[i].text === undefined) throw new Error(`unexpected <${tokens[i].name}> in <${name}>`);
      out += tokens[i].text;
      i++;
    }
    i++;
    return decodeEntities(out);
  };
  const value = () => {
    skipSpace();
    const t = tokens[i++];
    if (!t || t.close || t.text !== undefined) throw new Error("malformed property list");
    if (t.empty) {
      if (t.name === "true") return true;
      if (t.name === "false") return false;
      if (t.name === "dict") return {};
      if (t.name === "array") return [];
      if (t.name === "string") return "";
      throw new Error(`unexpected <${t.name}/>`);
    }
    switch (t.name) {
      case "plist": {
        const v = value();
        skipSpace();
        i++;
        return v;
      }
      case "dict": {
        const out = {};
        for (;;) {
          skipSpace();
          const k = tokens[i];
          if (k.close && k.name === "dict") {
            i++;
            return out;
          }
          if (k.name !== "key") throw new Error("a dict entry must start with <key>");
          i++;
          const key = textUntil("key");
          out[key] = value();
        }
      }
      case "array": {
        const out = [];
        for (;;) {
          skipSpace();
          if (tokens[i].close && tokens[i].name === "array") {
            i++;
            return out;
          }
          out.push(value());
        }
      }
      case "string":
        return textUntil("string");
      case "integer":
        return Number.parseInt(textUntil("integer").trim(), 10);
      case "real":
        return Number.parseFloat(textUntil("real").trim());
      case "date":
        return new Date(textUntil("date").trim());
      case "data":
        return Buffer.from(textUntil("data").replace(/\s+/g, ""), "base64");
      case "true":
      case "false":
        textUntil(t.name);
        return t.name === "true";
      default:
        throw new Error(`unknown property list element <${t.name}>`);
    }
  };
  return value();
}

function render(v, indent) {
  const pad = "\t".repeat(indent);
  if (v === true) return `${pad}<true/>`;
  if (v === false) return `${pad}<false/>`;
  if (typeof v === "number")
    return Number.isInteger(v) ? `${pad}<integer>${v}</integer>` : `${pad}<real>${v}</real>`;
  if (typeof v === "string") return `${pad}<string>${encodeEntities(v)}</string>`;
  if (v instanceof Date) return `${pad}<date>${v.toISOString().replace(/\.\d+Z$/, "Z")}</date>`;
  if (Buffer.isBuffer(v)) return `${pad}<data>${v.toString("base64")}</data>`;
  if (Array.isArray(v)) {
    if (v.length === 0) return `${pad}<array/>`;
    return [`${pad}<array>`, ...v.map((x) => render(x, indent + 1)), `${pad}</array>`].join("\n");
  }
  const entries = Object.entries(v).filter(([, x]) => x !== undefined);
  if (entries.length === 0) return `${pad}<dict/>`;
  return [
    `${pad}<dict>`,
    ...entries.flatMap(([k, x]) => [`${pad}\t<key>${encodeEntities(k)}</key>`, render(x, indent + 1)]),
    `${pad}</dict>`,
  ].join("\n");
}

/** Writes `value` as an XML plist, in the layout plutil -convert xml1 gives. */
export function writePlist(value) {
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
${render(value, 0)}
</plist>
`;
}
