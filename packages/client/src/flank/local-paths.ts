import { access } from "node:fs/promises";
import { UsageError } from "../cli/exit-codes.ts";

/**
 * A path as a flank file writes it, with `$VAR` and `${VAR}` taken from the environment as Flank does for
 * its file paths (CI files say `app: $BITRISE_APK_PATH`). A variable that is not set is a usage error that
 * names it: running with the literal text would only fail later with a stranger message.
 */
export function expandVariables(text: string, env: Record<string, string | undefined>, key: string): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_, braced, bare) => {
    const name = (braced ?? bare) as string;
    const value = env[name];
    if (value === undefined) {
      throw new UsageError(
        `${key}: ${text} names $${name}, which is not set in this environment. Nothing was sent.`,
      );
    }
    return value;
  });
}

/** The local file a key names, resolved from the working directory; a usage error when it is not there. */
export async function localFile(
  written: string,
  key: string,
  env: Record<string, string | undefined>,
  resolve: (file: string) => string,
): Promise<string> {
  const expanded = expandVariables(written, env, key);
  const resolved = resolve(expanded);
  try {
    await access(resolved);
  } catch {
    throw new UsageError(
      `${key} ${written}: no such file (looked for ${resolved}). Build it first; nothing was sent.`,
    );
  }
  return resolved;
}
