import { Command, Option } from "commander";
import { openExistingStore, StoreMissingError, storeDescription } from "./admin-store.ts";
import { systemClock } from "./clock.ts";
import { ConfigError, loadConfig, unknownVariables } from "./config.ts";
import { type DatabaseHandle, migrateToLatest, openDatabase } from "./db/kysely.ts";
import type { ClientRole, PersonRole } from "./db/schema.ts";
import { AuditLog } from "./features/audit/index.ts";
import {
  AdminError,
  type ClientRecord,
  ClientsRepo,
  ClientsService,
  clientNameRule,
  clientRoles,
} from "./features/clients/index.ts";
import { serverVersion } from "./features/downloads/index.ts";
import {
  AmbiguousEmailError,
  PeopleRepo,
  PeopleService,
  personRoles,
  type UserRecord,
} from "./features/people/index.ts";
import { closeOnSignals, logCrashes, startServer } from "./main.ts";

/**
 * Runs `work` against the store the configuration points at, and closes it afterwards. The store must exist
 * (admin-store.ts: only `start` and `migrate` make one); which one it is goes to stderr first.
 */
async function withStore<T>(work: (handle: DatabaseHandle) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const handle = await openExistingStore(config);
  try {
    console.error(storeDescription(config));
    return await work(handle);
  } finally {
    await handle.close();
  }
}

/** Runs `work` with the clients service of the existing store (withStore). */
function withClients<T>(work: (clients: ClientsService) => Promise<T>): Promise<T> {
  return withStore((handle) =>
    work(new ClientsService(new ClientsRepo(handle.db), systemClock, new AuditLog(handle.db, systemClock))),
  );
}

/** Runs `work` with the people service of the existing store (withStore). */
function withPeople<T>(work: (people: PeopleService) => Promise<T>): Promise<T> {
  return withStore((handle) =>
    work(new PeopleService(new PeopleRepo(handle.db), systemClock, new AuditLog(handle.db, systemClock))),
  );
}

const printJson = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

/** Rows as aligned columns under a header: what a person reads; `--json` is for scripts. */
function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd();
  process.stdout.write(`${[header, ...rows].map(line).join("\n")}\n`);
}

/** A listen failure a person can fix by configuration, said as one line with the fix; undefined otherwise. */
export function listenHint(error: unknown, port: number, host: string): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "EADDRINUSE") {
    return `port ${port} is in use: set TESTBAY_PORT=${port === 65535 ? port - 1 : port + 1} (or another free port) or stop the other process`;
  }
  if (code === "EACCES") {
    return `port ${port} needs privileges this user does not have: set TESTBAY_PORT to a port above 1023 (e.g. TESTBAY_PORT=8080)`;
  }
  if (code === "EADDRNOTAVAIL") {
    return `this machine has no address ${host}: set TESTBAY_HOST to one of its addresses (127.0.0.1, or 0.0.0.0 for all)`;
  }
  return undefined;
}

const clientRow = (client: ClientRecord) => ({
  client_id: client.id,
  name: client.name,
  org: client.organizationName,
  role: client.role,
  created_at: client.createdAt,
  disabled_at: client.disabledAt,
});

const userRow = (user: UserRecord) => ({
  email: user.email,
  org: user.organizationName,
  role: user.role,
  created_at: user.createdAt,
  disabled_at: user.disabledAt,
});

const program = new Command("testbay-server")
  .description("Testbay API server and its administration. Configured by TESTBAY_* environment variables.")
  .version(serverVersion, "-V, --version", "print the server's version")
  .showHelpAfterError();

program
  .command("start")
  .description("Migrate the database and serve the API (and, on an empty embedded store, create credentials)")
  .action(async () => {
    const config = loadConfig();
    for (const name of unknownVariables())
      console.error(`warning: ${name} is not a Testbay setting (a typo?)`);
    let running: Awaited<ReturnType<typeof startServer>>;
    try {
      running = await startServer(config);
    } catch (error) {
      const hint = listenHint(error, config.port, config.host);
      if (!hint) throw error;
      console.error(`testbay-server: ${hint}`);
      process.exit(1);
    }
    const { app, baseUrl, dashboardUrl, credentialsFile } = running;
    closeOnSignals(app);
    logCrashes(app);
    // The API's URL first: scripts read it from this line (test/server-process.ts).
    console.error(`Testbay is listening on ${baseUrl}`);
    console.error(`  Dashboard: ${dashboardUrl}  (open it in a browser)`);
    console.error(`  API:       ${baseUrl}  (reference: ${dashboardUrl}docs)`);
    if (credentialsFile) {
      console.error(`Created organization "default" with a ci and an agent client.`);
      console.error(`Created admin@localhost, who can sign in to the dashboard.`);
      console.error(`Their credentials are in ${credentialsFile} (readable by you only).`);
    }
  });

program
  .command("migrate")
  .description("Apply pending database migrations and exit")
  .action(async () => {
    const handle = openDatabase(loadConfig().databaseUrl);
    try {
      const applied = await migrateToLatest(handle.db);
      console.error(applied.length ? `Applied: ${applied.join(", ")}` : "The database is up to date.");
    } finally {
      await handle.close();
    }
  });

const org = program.command("org").description("Manage organizations");
org
  .command("create")
  .argument("<name>", "organization name: lowercase letters, digits, '.', '_' or '-'")
  .description("Create an organization; prints it as JSON")
  .action(async (name: string) => {
    const created = await withClients((clients) => clients.createOrganization(name));
    printJson({ id: created.id, name: created.name, created_at: created.createdAt });
  });

org
  .command("list")
  .description("List the organizations: id, name, created")
  .option("--json", "print a JSON array instead of a table")
  .action(async (options: { json?: boolean }) => {
    const orgs = await withClients((clients) => clients.listOrganizations());
    const rows = orgs.map((o) => ({ id: o.id, name: o.name, created_at: o.createdAt }));
    if (options.json) printJson(rows);
    else
      printTable(
        ["ID", "NAME", "CREATED"],
        rows.map((row) => [row.id, row.name, row.created_at]),
      );
  });

const client = program.command("client").description("Manage API clients");
client
  .command("create")
  .description(
    "Create a client; prints {client_id, client_secret, org, role, name} as JSON (the secret is shown only now)",
  )
  .requiredOption("--org <name>", "organization the client belongs to")
  .addOption(new Option("--role <role>", "what the client may do").choices(clientRoles).makeOptionMandatory())
  .option("--name <name>", `what people call it, shown beside its ID (e.g. "nightly CI"): ${clientNameRule}`)
  .action(async (options: { org: string; role: ClientRole; name?: string }) => {
    printJson(
      await withClients((clients) =>
        clients.createClient(options.org, options.role, undefined, options.name ?? null),
      ),
    );
  });
client
  .command("disable")
  .argument("<client_id>")
  .description("Disable a client: its tokens stop working at once and it can get no new ones")
  .action(async (id: string) => {
    await withClients((clients) => clients.disableClient(id));
    console.error(`Client ${id} is disabled.`);
  });

client
  .command("enable")
  .argument("<client_id>")
  .description(
    "Enable a disabled client: it can get new tokens; those from before it was disabled stay refused",
  )
  .action(async (id: string) => {
    await withClients((clients) => clients.enableClient(id));
    console.error(`Client ${id} is enabled.`);
  });
client
  .command("rotate")
  .argument("<client_id>")
  .description(
    "Give a client a new secret; prints {client_id, client_secret, org, role, name} as JSON (shown only now). The old secret and every token issued before stop working at once",
  )
  .action(async (id: string) => {
    printJson(await withClients((clients) => clients.rotateSecret(id)));
    console.error(`Client ${id} has a new secret; the old one and the tokens issued with it no longer work.`);
  });

const orgOfEmail = "the person's organization; needed only when the email has accounts in several";
const user = program.command("user").description("Manage the people who sign in to the dashboard");
user
  .command("create")
  .description(
    "Create a person; prints {email, role, org, password} as JSON (a generated password, shown only now; they can change it after signing in)",
  )
  .requiredOption("--email <email>", "what they sign in with (case-insensitive)")
  .addOption(
    new Option(
      "--role <role>",
      "viewer reads; member also creates plans and triggers; admin also manages clients",
    )
      .choices(personRoles)
      .makeOptionMandatory(),
  )
  .option(
    "--org <name>",
    "organization the person belongs to (an email can have an account in each organization)",
    "default",
  )
  .action(async (options: { email: string; role: PersonRole; org: string }) => {
    printJson(
      await withPeople((people) =>
        people.createUser({ email: options.email, role: options.role, org: options.org }),
      ),
    );
  });
user
  .command("list")
  .description("List people: email, organization, role, created, disabled (never passwords)")
  .option("--org <name>", "only this organization's people")
  .option("--json", "print a JSON array instead of a table")
  .action(async (options: { org?: string; json?: boolean }) => {
    const rows = (await withPeople((people) => people.listUsers(options.org))).map(userRow);
    if (options.json) printJson(rows);
    else
      printTable(
        ["EMAIL", "ORG", "ROLE", "CREATED", "DISABLED"],
        rows.map((row) => [row.email, row.org, row.role, row.created_at, row.disabled_at ?? "-"]),
      );
  });
user
  .command("disable")
  .argument("<email>")
  .description("Disable a person: they are signed out everywhere at once and cannot sign in")
  .option("--org <name>", orgOfEmail)
  .action(async (email: string, options: { org?: string }) => {
    await withPeople((people) => people.disableUser(email, undefined, options.org));
    console.error(`${email} is disabled and signed out.`);
  });
user
  .command("enable")
  .argument("<email>")
  .description("Enable a disabled person: they can sign in again")
  .option("--org <name>", orgOfEmail)
  .action(async (email: string, options: { org?: string }) => {
    await withPeople((people) => people.enableUser(email, undefined, options.org));
    console.error(`${email} is enabled.`);
  });
client
  .command("list")
  .description("List clients: id, name, organization, role, created, disabled (never secrets)")
  .option("--org <name>", "only this organization's clients")
  .option("--json", "print a JSON array instead of a table")
  .action(async (options: { org?: string; json?: boolean }) => {
    const rows = (await withClients((clients) => clients.listAllClients(options.org))).map(clientRow);
    if (options.json) printJson(rows);
    else
      printTable(
        ["CLIENT ID", "ORG", "ROLE", "CREATED", "DISABLED", "NAME"],
        rows.map((row) => [
          row.client_id,
          row.org,
          row.role,
          row.created_at,
          row.disabled_at ?? "-",
          row.name ?? "-",
        ]),
      );
  });

try {
  await program.parseAsync();
} catch (error) {
  if (error instanceof ConfigError) {
    for (const problem of error.problems) console.error(`testbay-server: ${problem}`);
    process.exit(2);
  }
  // Exit 2 as for a configuration error: retrying will not help, pointing it at the right store will.
  if (error instanceof StoreMissingError) {
    console.error(`testbay-server: ${error.message}`);
    process.exit(2);
  }
  // Exit 2: the command was incomplete (which account?), and its message names the option to add.
  if (error instanceof AmbiguousEmailError) {
    console.error(`testbay-server: ${error.message}`);
    process.exit(2);
  }
  if (error instanceof AdminError) {
    console.error(`testbay-server: ${error.message}`);
    process.exit(1);
  }
  console.error(`testbay-server: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
