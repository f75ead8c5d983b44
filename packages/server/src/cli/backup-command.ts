import path from "node:path";
import type { Command } from "commander";
import { storeDescription } from "../admin-store.ts";
import { createBackup, sizeText } from "../backup/create-backup.ts";
import { type CliIo, configOf } from "./cli-io.ts";

/** `testbay-server backup --to DIR`: backup/create-backup.ts; what it did goes to stderr, as other commands' notes. */
export function addBackupCommand(program: Command, io: CliIo): void {
  const err = (line: string) => io.stderr.write(`${line}\n`);
  program
    .command("backup")
    .description(
      "Copy the embedded store (SQLite database and blob files) into a new or empty directory, while the server runs; restore it with restore --from",
    )
    .requiredOption("--to <dir>", "where the backup goes: a new or empty directory")
    .action(async (options: { to: string }) => {
      const config = configOf(io);
      err(storeDescription(config));
      const to = path.resolve(io.cwd, options.to);
      const summary = await createBackup(config, to, err);
      const { manifest } = summary;
      const bytes = manifest.files.reduce((sum, file) => sum + file.size, 0);
      // A few by name; the count says the rest.
      const deleted = summary.deletedWhileCopying;
      for (const key of deleted.slice(0, 10)) {
        err(
          `warning: blob ${key} was deleted while the backup ran (its version or files deleted meanwhile): the backup keeps its record, not its bytes`,
        );
      }
      if (deleted.length > 10)
        err(`warning: … and ${deleted.length - 10} more blobs deleted while the backup ran`);
      err(
        `Backup written to ${to}: ${manifest.files.length} files, ${sizeText(bytes)} (schema ${manifest.schema_version}, taken at ${manifest.created_at}).`,
      );
      err(`Restore it with: testbay-server restore --from ${to} (into an empty TESTBAY_DATA_DIR)`);
    });
}
