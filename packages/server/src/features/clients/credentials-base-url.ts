import { readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * Keeps `credentials.json`'s `base_url` on the address this start answers on. The file is written once, at the
 * first start (bootstrap.ts), but the walkthroughs (README.md, docs/) and scripts read their address from it: after a
 * restart on another `TESTBAY_PORT` (or `TESTBAY_PUBLIC_URL`) they would call the old one. Only `base_url`
 * changes; the secrets are kept as they are. A missing or unreadable file is left alone (an operator may have
 * moved it away once the secrets were stored elsewhere). Returns whether the file was changed.
 */
export async function pointCredentialsAt(dataDir: string, baseUrl: string): Promise<boolean> {
  const file = path.join(dataDir, "credentials.json");
  let credentials: Record<string, unknown>;
  try {
    credentials = JSON.parse(await readFile(file, "utf8"));
  } catch {
    return false;
  }
  if (typeof credentials !== "object" || credentials === null || credentials.base_url === baseUrl)
    return false;
  // Written aside with mode 0600, then renamed, as bootstrap.ts writes it: never world-readable, never half-written.
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, `${JSON.stringify({ ...credentials, base_url: baseUrl }, null, 2)}\n`, {
    mode: 0o600,
  });
  await rename(partial, file);
  return true;
}
