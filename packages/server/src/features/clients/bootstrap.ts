import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { privateDirMode } from "../../fs-permissions.ts";
import { AdminError, type ClientsService } from "./clients.service.ts";

export interface BootstrapOptions {
  dataDir: string;
  audience: string;
  /** The `…/v1` URL the server answers on, written into the file so clients can be pointed at it. */
  baseUrl: string;
  /** Creates the first person who can sign in to the dashboard (features/people), written as `admin`. */
  createFirstAdmin?: () => Promise<{ email: string; password: string }>;
}

/** The names of the clients a first start makes, so that runs and lists say where they came from. */
export const firstStartClientNames = {
  ci: "ci (created at first start)",
  agent: "agent (created at first start)",
} as const;

/**
 * On the first start of an empty embedded store: creates organization `default` with one `ci` and one
 * `agent` client (and the `admin@localhost` person, when given the means) and writes their credentials to `<data dir>/credentials.json`, readable by its owner only.
 * Returns the file's path, or undefined when the store was not empty.
 */
export async function bootstrapDefaultOrganization(
  clients: ClientsService,
  options: BootstrapOptions,
): Promise<string | undefined> {
  if (!(await clients.isEmpty())) return undefined;
  try {
    await clients.createOrganization("default");
  } catch (error) {
    // Another process starting on the same store at the same moment got there first: it writes the file.
    if (error instanceof AdminError) return undefined;
    throw error;
  }
  const ci = await clients.createClient("default", "ci", undefined, firstStartClientNames.ci);
  const agent = await clients.createClient("default", "agent", undefined, firstStartClientNames.agent);
  const admin = await options.createFirstAdmin?.();
  const credentials = {
    audience: options.audience,
    base_url: options.baseUrl,
    ci: { client_id: ci.client_id, client_secret: ci.client_secret },
    agent: { client_id: agent.client_id, client_secret: agent.client_secret },
    ...(admin ? { admin: { email: admin.email, password: admin.password } } : {}),
  };
  await mkdir(options.dataDir, { recursive: true, mode: privateDirMode });
  const file = path.join(options.dataDir, "credentials.json");
  // Written under another name with mode 0600 from the start, then renamed: never world-readable, never half-written.
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  await rename(partial, file);
  return file;
}

/**
 * Names the clients of `<data dir>/credentials.json` that have no name: those a first start made before
 * clients had names (migration 0024). Which clients they are is known only from that file, so this is done at
 * start, not by the migration; a missing or unreadable file, or IDs of another store, name nothing.
 */
export async function nameFirstStartClients(clients: ClientsService, dataDir: string): Promise<void> {
  let credentials: Record<string, { client_id?: unknown } | undefined>;
  try {
    credentials = JSON.parse(await readFile(path.join(dataDir, "credentials.json"), "utf8"));
  } catch {
    return;
  }
  for (const role of ["ci", "agent"] as const) {
    const id = credentials?.[role]?.client_id;
    if (typeof id === "string") await clients.nameIfUnnamed(id, firstStartClientNames[role]);
  }
}
