import { Command, Option } from "commander";
import { systemClock } from "./clock.ts";
import { ConfigError, loadConfig, unknownVariables } from "./config.ts";
import { migrateToLatest, openDatabase } from "./db/kysely.ts";
import type { ClientRole } from "./db/schema.ts";
import { AdminError, ClientsRepo, ClientsService, clientRoles } from "./features/clients/index.ts";
import { closeOnSignals, logCrashes, startServer } from "./main.ts";

/** Runs `work` against the configured database, migrated, and closes it afterwards. */
async function withClients<T>(work: (clients: ClientsService) => Promise<T>): Promise<T> {
  const handle = openDatabase(loadConfig().databaseUrl);
  try {
    await migrateToLatest(handle.db);
    return await work(new ClientsService(new ClientsRepo(handle.db), systemClock));
  } finally {
    await handle.close();
  }
}

const printJson = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

const program = new Command("testbay-server")
  .description("Testbay API server and its administration. Configured by TESTBAY_* environment variables.")
  .showHelpAfterError();

program
  .command("start")
  .description("Migrate the database and serve the API (and, on an empty embedded store, create credentials)")
  .action(async () => {
    const config = loadConfig();
    for (const name of unknownVariables())
      console.error(`warning: ${name} is not a Testbay setting (a typo?)`);
    const { app, baseUrl, credentialsFile } = await startServer(config);
    closeOnSignals(app);
    logCrashes(app);
    console.error(`Testbay is listening on ${baseUrl}`);
    if (credentialsFile) {
      console.error(`Created organization "default" with a ci and an agent client.`);
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

const client = program.command("client").description("Manage API clients");
client
  .command("create")
  .description(
    "Create a client; prints {client_id, client_secret, org, role} as JSON (the secret is shown only now)",
  )
  .requiredOption("--org <name>", "organization the client belongs to")
  .addOption(new Option("--role <role>", "what the client may do").choices(clientRoles).makeOptionMandatory())
  .action(async (options: { org: string; role: ClientRole }) => {
    printJson(await withClients((clients) => clients.createClient(options.org, options.role)));
  });
client
  .command("disable")
  .argument("<client_id>")
  .description("Disable a client: its tokens stop working at once and it can get no new ones")
  .action(async (id: string) => {
    await withClients((clients) => clients.disableClient(id));
    console.error(`Client ${id} is disabled.`);
  });

try {
  await program.parseAsync();
} catch (error) {
  if (error instanceof ConfigError) {
    for (const problem of error.problems) console.error(`testbay-server: ${problem}`);
    process.exit(2);
  }
  if (error instanceof AdminError) {
    console.error(`testbay-server: ${error.message}`);
    process.exit(1);
  }
  console.error(`testbay-server: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
