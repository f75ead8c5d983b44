import type { Command } from "commander";
import { ExitCode } from "../exit-codes.ts";
import { table } from "../output.ts";
import type { Session } from "../session.ts";

/** `testbay agents`: who is connected, their devices and what they run. */
export function addAgentsCommand(program: Command, session: Session): void {
  program
    .command("agents")
    .description("Who is connected: agents, their devices and what they run")
    .action(async () => {
      const items = await session.testbay().agents.list();
      if (!session.json) {
        const rows = [["AGENT", "NAME", "ONLINE", "LAST SEEN", "STEP TYPES", "DEVICES", "RUNNING"]];
        for (const a of items) {
          const devices = a.devices
            .map((d) => `${d.model} ${d.os_version} ${d.serial} (${d.state})`)
            .join(", ");
          rows.push([
            a.id,
            a.name,
            a.online ? "yes" : "no",
            a.last_seen_at,
            a.step_types.join(",") || "-",
            devices || "host only",
            a.running.join(" ") || "-",
          ]);
        }
        session.print(
          items.length ? table(rows) : "No agents have connected: start one with testbay-agent.\n",
        );
      }
      session.setOutcome({ code: ExitCode.ok, json: { items } });
    });
}
