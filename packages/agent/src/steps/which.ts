/** Finds a command on PATH the way a shell would, without running it (no `which` binary needed). */
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { delimiter, isAbsolute, join } from "node:path";

/** The full path of the first executable `command` on `pathEnv`, or null. */
export async function which(command: string, pathEnv = process.env.PATH ?? ""): Promise<string | null> {
  if (command.includes("/")) return (await isExecutable(command)) ? command : null;
  for (const dir of pathEnv.split(delimiter)) {
    // An empty or relative PATH entry would depend on the agent's cwd; skip it like a careful shell.
    if (dir === "" || !isAbsolute(dir)) continue;
    const candidate = join(dir, command);
    if (await isExecutable(candidate)) return candidate;
  }
  return null;
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
