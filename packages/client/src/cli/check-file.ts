import { access } from "node:fs/promises";
import { UsageError } from "./exit-codes.ts";
import type { Session } from "./session.ts";

/** A --file that is not there is a usage error naming where it was looked for, before anything is sent. */
export async function checkFile(session: Session, file: string, flag = "--file"): Promise<string> {
  const resolved = session.resolvePath(file);
  try {
    await access(resolved);
  } catch {
    throw new UsageError(`${flag} ${file}: no such file (looked for ${resolved}).`);
  }
  return resolved;
}
