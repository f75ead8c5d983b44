import { readFile } from "node:fs/promises";
import path from "node:path";

/** One CODEOWNERS line: its pattern as a test of a repository path, and its owners (none unsets them). */
interface Rule {
  pattern: string;
  matches: (file: string) => boolean;
  owners: string[];
}

/** Where GitHub looks for the file, in its order: the first one found is the one used. */
export const codeownersLocations = [".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"];

const escapeRegExp = (text: string) => text.replace(/[.+^${}()|[\]\\]/g, "\\$&");

/** A pattern's body (no leading or trailing slash) as a regular expression's source, `*`, `**` and `?` as git reads them. */
function globSource(body: string): string {
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c === "*" && body[i + 1] === "*") {
      const before = i === 0 || body[i - 1] === "/";
      const after = i + 2 === body.length || body[i + 2] === "/";
      if (before && after) {
        // `**/` is any number of directories (none too); a final `**` is everything inside.
        if (i + 2 === body.length) out += ".*";
        else {
          out += "(?:.*/)?";
          i += 1; // the slash after it is part of what it matched
        }
        i += 1;
        continue;
      }
      out += "[^/]*";
      i += 1;
      continue;
    }
    if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "\\" && i + 1 < body.length) {
      out += escapeRegExp(body[i + 1] as string);
      i += 1;
    } else out += escapeRegExp(c);
  }
  return out;
}

/**
 * A CODEOWNERS pattern as GitHub reads it (gitignore's rules, without `!` and `[…]`): a pattern with a slash
 * at its start or in its middle is anchored at the repository's root, one without matches at any depth; a
 * pattern matches a file or a directory above it (`/docs/`, `apps/`, `logs` under `**`), except that a final `/*`
 * matches only the files directly in that directory (`docs/*` is not `docs/a/b.md`).
 */
export function patternMatcher(pattern: string): (file: string) => boolean {
  const directoryOnly = pattern.endsWith("/");
  const trimmed = pattern.replace(/\/+$/, "");
  const anchored = trimmed.startsWith("/") || trimmed.includes("/");
  const body = trimmed.replace(/^\/+/, "");
  const regex = new RegExp(`^${anchored ? "" : "(?:.*/)?"}${globSource(body)}$`);
  const shallow = body.endsWith("/*") && !body.endsWith("/**");
  return (file: string) => {
    const parts = file.split("/");
    // The file itself, then each directory above it.
    for (let end = parts.length; end >= 1; end--) {
      const candidate = parts.slice(0, end).join("/");
      const isFile = end === parts.length;
      if (isFile && directoryOnly) continue;
      if (!isFile && shallow) break;
      if (regex.test(candidate)) return true;
    }
    return false;
  };
}

/** The rules of a CODEOWNERS file, in order; comments, blank lines and `\#` escapes as GitHub reads them. */
export function parseCodeowners(text: string): Rule[] {
  const rules: Rule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    // A `#` starts a comment unless escaped.
    const line = raw.replace(/(^|[^\\])#.*$/, "$1").trim();
    if (line === "") continue;
    const [pattern, ...owners] = line.split(/\s+/);
    if (!pattern || pattern.startsWith("!")) continue; // GitHub ignores negation
    rules.push({ pattern, matches: patternMatcher(pattern), owners });
  }
  return rules;
}

/** The owners of a path relative to the repository's root: the last matching rule's (GitHub: last wins). */
export function ownersOf(rules: Rule[], file: string): string[] {
  const normalized = file
    .split(path.sep)
    .join("/")
    .replace(/^\.?\//, "");
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i] as Rule;
    if (rule.matches(normalized)) return rule.owners;
  }
  return [];
}

/** The repository's CODEOWNERS rules, from the first of GitHub's locations that has the file; none without one. */
export async function readCodeowners(repositoryRoot: string): Promise<Rule[]> {
  for (const location of codeownersLocations) {
    const text = await readFile(path.join(repositoryRoot, location), "utf8").catch(() => undefined);
    if (text !== undefined) return parseCodeowners(text);
  }
  return [];
}

export type CodeownersRules = Rule[];
