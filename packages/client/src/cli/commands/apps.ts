import type { Command } from "commander";
import { ExitCode, UsageError } from "../exit-codes.ts";
import { table } from "../output.ts";
import type { Session } from "../session.ts";

/** `testbay apps create|list`: the apps builds are uploaded for. */
export function addAppsCommands(program: Command, session: Session): void {
  const apps = program.command("apps").description("Apps: what builds are uploaded for");
  apps
    .command("create")
    .description("Register an app, once, before its first upload")
    .requiredOption(
      "--app <package>",
      "package name (Android applicationId or iOS bundle ID; case-sensitive)",
    )
    .requiredOption("--platform <platform>", "android or ios")
    .option("--name <name>", "a display name")
    .action(async (options: { app: string; platform: string; name?: string }) => {
      if (options.platform !== "android" && options.platform !== "ios") {
        throw new UsageError(`--platform ${options.platform}: say android or ios.`);
      }
      const created = await session.testbay().apps.create({
        package_name: options.app,
        platform: options.platform,
        ...(options.name ? { display_name: options.name } : {}),
      });
      session.say(
        `Created ${created.platform} app ${created.package_name}. Next: testbay upload --app ${created.package_name} --version VERSION --file PATH`,
      );
      session.setOutcome({ code: ExitCode.ok, json: created });
    });
  apps
    .command("list")
    .description("List the organization's apps")
    .action(async () => {
      const items = [];
      for await (const app of session.testbay().apps.all({ limit: 200 })) items.push(app);
      if (!session.json) {
        const rows = [["PACKAGE", "PLATFORM", "NAME", "CREATED"]];
        for (const a of items) rows.push([a.package_name, a.platform, a.display_name ?? "-", a.created_at]);
        session.print(
          items.length
            ? table(rows)
            : "No apps: create one with testbay apps create --app PACKAGE --platform android\n",
        );
      }
      session.setOutcome({ code: ExitCode.ok, json: { items } });
    });
}
