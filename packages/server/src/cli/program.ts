import { Command, Option } from "commander";
import { openExistingStore, storeDescription } from "../admin-store.ts";
import { systemClock } from "../clock.ts";
import { unknownVariables } from "../config.ts";
import { type DatabaseHandle, migrateToLatest, openDatabase } from "../db/kysely.ts";
import type { ClientRole, PersonRole } from "../db/schema.ts";
import { AuditLog } from "../features/audit/index.ts";
import {
  AdminError,
  type ClientRecord,
  ClientsRepo,
  ClientsService,
  clientNameRule,
  clientRoles,
  type OrganizationRecord,
} from "../features/clients/index.ts";
import { serverVersion } from "../features/downloads/index.ts";
import { PeopleRepo, PeopleService, personRoles, type UserRecord } from "../features/people/index.ts";
import { closeOnSignals, logCrashes, startServer } from "../main.ts";
import { addBackupCommand } from "./backup-command.ts";
import { type CliIo, configOf, type TextSink } from "./cli-io.ts";
import { listenHint } from "./listen-hint.ts";
import { addRestoreCommand } from "./restore-command.ts";

/**
 * Runs `work` against the store the configuration points at, and closes it afterwards. The store must exist
 * (admin-store.ts: only `start` and `migrate` make one); which one it is goes to stderr first.
 */
async function withStore<T>(io: CliIo, work: (handle: DatabaseHandle) => Promise<T>): Promise<T> {
  const config = configOf(io);
  const handle = await openExistingStore(config);
  try {
    io.stderr.write(`${storeDescription(config)}\n`);
    return await work(handle);
  } finally {
    await handle.close();
  }
}

/** Runs `work` with the clients service of the existing store (withStore). */
function withClients<T>(io: CliIo, work: (clients: ClientsService) => Promise<T>): Promise<T> {
  return withStore(io, (handle) =>
    work(new ClientsService(new ClientsRepo(handle.db), systemClock, new AuditLog(handle.db, systemClock))),
  );
}

/** Runs `work` with the people service of the existing store (withStore). */
function withPeople<T>(io: CliIo, work: (people: PeopleService) => Promise<T>): Promise<T> {
  return withStore(io, (handle) =>
    work(new PeopleService(new PeopleRepo(handle.db), systemClock, new AuditLog(handle.db, systemClock))),
  );
}

const printJson = (out: TextSink, value: unknown) => out.write(`${JSON.stringify(value, null, 2)}\n`);

/** Rows as aligned columns under a header: what a person reads; `--json` is for scripts. */
function printTable(out: TextSink, header: string[], rows: string[][]): void {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd();
  out.write(`${[header, ...rows].map(line).join("\n")}\n`);
}

/**
 * A `start` that could not listen for a reason the operator fixes by configuration: its message is the hint
 * (listen-hint.ts), which run-server-cli.ts prints as every other failure, and the run exits 1.
 */
export class ListenRefusedError extends Error {
  override name = "ListenRefusedError";
}

const organizationRow = (org: OrganizationRecord) => ({
  id: org.id,
  name: org.name,
  created_at: org.createdAt,
  max_concurrent_device_runs: org.maxConcurrentDeviceRuns ?? null,
});

const clientRow = (client: ClientRecord) => ({
  client_id: client.id,
  name: client.name,
  org: client.organizationName,
  role: client.role,
  created_at: client.createdAt,
  disabled_at: client.disabledAt,
  all_orgs: client.allOrganizations,
});

const userRow = (user: UserRecord) => ({
  email: user.email,
  org: user.organizationName,
  role: user.role,
  created_at: user.createdAt,
  disabled_at: user.disabledAt,
});

/**
 * The `testbay-server` program for one run: a new Command each time, since commander keeps what it parsed in
 * the Command; it writes to the run's streams and throws a CommanderError where it would exit the process
 * (run-server-cli.ts turns that into the exit code commander would have used).
 *
 * `start` ties the server it starts to the process (it closes on SIGTERM/SIGINT and exits on a crash: main.ts),
 * so only the bin starts one successfully; a run in a test's process may use it up to the point of failing.
 */
export function buildServerProgram(io: CliIo): Command {
  const err = (line: string) => io.stderr.write(`${line}\n`);
  const program = new Command("testbay-server")
    // Set before the subcommands are added, which inherit both.
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .description("Testbay API server and its administration. Configured by TESTBAY_* environment variables.")
    .version(serverVersion, "-V, --version", "print the server's version")
    .showHelpAfterError();

  program
    .command("start")
    .description(
      "Migrate the database and serve the API (and, on an empty embedded store, create credentials)",
    )
    .action(async () => {
      const config = configOf(io);
      for (const name of unknownVariables(io.env)) err(`warning: ${name} is not a Testbay setting (a typo?)`);
      let running: Awaited<ReturnType<typeof startServer>>;
      try {
        running = await startServer(config, { logDestination: io.serverLog });
      } catch (error) {
        const hint = listenHint(error, config.port, config.host);
        if (!hint) throw error;
        throw new ListenRefusedError(hint);
      }
      const { app, baseUrl, dashboardUrl, credentialsFile } = running;
      closeOnSignals(app);
      logCrashes(app);
      // The API's URL first: scripts read it from this line (test/server-process.ts).
      err(`Testbay is listening on ${baseUrl}`);
      err(`  Dashboard: ${dashboardUrl}  (open it in a browser)`);
      err(`  API:       ${baseUrl}  (reference: ${dashboardUrl}docs)`);
      if (credentialsFile) {
        err(`Created organization "default" with a ci and an agent client.`);
        err(`Created admin@localhost, who can sign in to the dashboard.`);
        err(`Their credentials are in ${credentialsFile} (readable by you only).`);
      }
    });

  program
    .command("migrate")
    .description("Apply pending database migrations and exit")
    .action(async () => {
      const handle = openDatabase(configOf(io).databaseUrl);
      try {
        const applied = await migrateToLatest(handle.db);
        err(applied.length ? `Applied: ${applied.join(", ")}` : "The database is up to date.");
      } finally {
        await handle.close();
      }
    });

  addBackupCommand(program, io);
  addRestoreCommand(program, io);

  const org = program.command("org").description("Manage organizations");
  org
    .command("create")
    .argument("<name>", "organization name: lowercase letters, digits, '.', '_' or '-'")
    .description("Create an organization; prints it as JSON")
    .action(async (name: string) => {
      const created = await withClients(io, (clients) => clients.createOrganization(name));
      printJson(io.stdout, { id: created.id, name: created.name, created_at: created.createdAt });
    });

  org
    .command("list")
    .description("List the organizations: id, name, created, max concurrent device runs (- for no limit)")
    .option("--json", "print a JSON array instead of a table")
    .action(async (options: { json?: boolean }) => {
      const orgs = await withClients(io, (clients) => clients.listOrganizations());
      const rows = orgs.map(organizationRow);
      if (options.json) printJson(io.stdout, rows);
      else
        printTable(
          io.stdout,
          ["ID", "NAME", "CREATED", "MAX RUNNING"],
          rows.map((row) => [
            row.id,
            row.name,
            row.created_at,
            String(row.max_concurrent_device_runs ?? "-"),
          ]),
        );
    });

  org
    .command("set-limits")
    .argument("<name>", "the organization")
    .description(
      "Cap how many of the organization's device runs run at once, on a fleet it shares with others (API.md §15); its other runs wait with waiting_reason org_limit. Prints the organization as JSON",
    )
    .requiredOption(
      "--max-concurrent-device-runs <n>",
      'a whole number of at least 1, or "none" to lift the limit',
    )
    .action(async (name: string, options: { maxConcurrentDeviceRuns: string }) => {
      const given = options.maxConcurrentDeviceRuns;
      if (given !== "none" && !/^[1-9]\d{0,5}$/.test(given)) {
        throw new AdminError(
          `--max-concurrent-device-runs ${JSON.stringify(given)} is not a limit: give a whole number of at least 1, or "none" to lift the limit.`,
        );
      }
      const max = given === "none" ? null : Number(given);
      const org = await withClients(io, (clients) => clients.setOrganizationLimits(name, max));
      printJson(io.stdout, organizationRow(org));
    });

  const client = program.command("client").description("Manage API clients");
  client
    .command("create")
    .description(
      "Create a client; prints {client_id, client_secret, org, role, name} as JSON (the secret is shown only now)",
    )
    .requiredOption("--org <name>", "organization the client belongs to")
    .addOption(
      new Option("--role <role>", "what the client may do").choices(clientRoles).makeOptionMandatory(),
    )
    .option(
      "--name <name>",
      `what people call it, shown beside its ID (e.g. "nightly CI"): ${clientNameRule}`,
    )
    .option(
      "--all-orgs",
      "an agent client that claims the runs of every organization (a fleet shared by all of them), not only --org's",
    )
    .action(async (options: { org: string; role: ClientRole; name?: string; allOrgs?: boolean }) => {
      printJson(
        io.stdout,
        await withClients(io, (clients) =>
          clients.createClient(options.org, options.role, undefined, options.name ?? null, {
            allOrganizations: options.allOrgs === true,
          }),
        ),
      );
    });
  client
    .command("disable")
    .argument("<client_id>")
    .description("Disable a client: its tokens stop working at once and it can get no new ones")
    .action(async (id: string) => {
      await withClients(io, (clients) => clients.disableClient(id));
      err(`Client ${id} is disabled.`);
    });

  client
    .command("enable")
    .argument("<client_id>")
    .description(
      "Enable a disabled client: it can get new tokens; those from before it was disabled stay refused",
    )
    .action(async (id: string) => {
      await withClients(io, (clients) => clients.enableClient(id));
      err(`Client ${id} is enabled.`);
    });
  client
    .command("rotate")
    .argument("<client_id>")
    .description(
      "Give a client a new secret; prints {client_id, client_secret, org, role, name} as JSON (shown only now). The old secret and every token issued before stop working at once",
    )
    .action(async (id: string) => {
      printJson(io.stdout, await withClients(io, (clients) => clients.rotateSecret(id)));
      err(`Client ${id} has a new secret; the old one and the tokens issued with it no longer work.`);
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
        io.stdout,
        await withPeople(io, (people) =>
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
      const rows = (await withPeople(io, (people) => people.listUsers(options.org))).map(userRow);
      if (options.json) printJson(io.stdout, rows);
      else
        printTable(
          io.stdout,
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
      await withPeople(io, (people) => people.disableUser(email, undefined, options.org));
      err(`${email} is disabled and signed out.`);
    });
  user
    .command("enable")
    .argument("<email>")
    .description("Enable a disabled person: they can sign in again")
    .option("--org <name>", orgOfEmail)
    .action(async (email: string, options: { org?: string }) => {
      await withPeople(io, (people) => people.enableUser(email, undefined, options.org));
      err(`${email} is enabled.`);
    });
  client
    .command("list")
    .description(
      "List clients: id, organization, role, whose runs an agent serves (its organization's, or all-orgs), created, disabled, name (never secrets)",
    )
    .option("--org <name>", "only this organization's clients")
    .option("--json", "print a JSON array instead of a table")
    .action(async (options: { org?: string; json?: boolean }) => {
      const rows = (await withClients(io, (clients) => clients.listAllClients(options.org))).map(clientRow);
      if (options.json) printJson(io.stdout, rows);
      else
        printTable(
          io.stdout,
          ["CLIENT ID", "ORG", "ROLE", "SERVES", "CREATED", "DISABLED", "NAME"],
          rows.map((row) => [
            row.client_id,
            row.org,
            row.role,
            row.all_orgs ? "all-orgs" : "own-org",
            row.created_at,
            row.disabled_at ?? "-",
            row.name ?? "-",
          ]),
        );
    });

  return program;
}
