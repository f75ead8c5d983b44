/**
 * Finds the JUnit reports a shell step names with a glob. The glob is relative to the step's work
 * directory and may not reach out of it: a plan's pattern must not make the agent upload files from
 * elsewhere on the host.
 */
import { isAbsolute, relative, resolve, sep } from "node:path";
import { glob } from "tinyglobby";

// ".." as a whole path segment, also inside braces or alternatives: "../x", "a/../b", "{..,x}/y".
const PARENT_SEGMENT = /(^|[/\\{,(|])\.\.($|[/\\},)|])/;

/** Why the pattern is refused, or null when it is fine. */
export function checkJUnitPattern(pattern: string): string | null {
  if (pattern.trim() === "") return "junit pattern is empty";
  if (
    isAbsolute(pattern) ||
    pattern.startsWith("\\") ||
    /^[A-Za-z]:/.test(pattern) ||
    pattern.startsWith("~")
  ) {
    return `junit pattern must be relative to the work directory: ${pattern}`;
  }
  if (PARENT_SEGMENT.test(pattern)) return `junit pattern must not leave the work directory: ${pattern}`;
  return null;
}

/** Matching files as absolute paths, sorted, all inside workDir. Call checkJUnitPattern first. */
export async function findJUnitFiles(pattern: string, workDir: string): Promise<string[]> {
  const root = resolve(workDir);
  const files = await glob(pattern, { cwd: root, absolute: true, onlyFiles: true, dot: true });
  // Belt and braces: whatever the glob library made of the pattern, keep only paths under the root.
  const inside = files.filter((file) => {
    const rel = relative(root, resolve(file));
    return rel !== "" && !rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel);
  });
  return inside.sort();
}
