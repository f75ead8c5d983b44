import path from "node:path";
import type { Command } from "commander";
import { storeDescription } from "../admin-store.ts";
import { restoreBackup } from "../backup/restore-backup.ts";
import { type CliIo, configOf } from "./cli-io.ts";

/**
 * `testbay-server restore --from DIR`: backup/restore-backup.ts. Exit 0 restored, 2 refused for the
 * configuration or target (PostgreSQL/S3, a data dir not empty, a newer schema, no backup there), 3 refused
 * because the backup does not match its manifest (backup/backup-errors.ts).
 */
export function addRestoreCommand(program: Command, io: CliIo): void {
  const err = (line: string) => io.stderr.write(`${line}\n`);
  program
    .command("restore")
    .description(
      "Restore a backup made by backup --to into an empty data dir, after checking every file's SHA-256 (a refused restore writes nothing)",
    )
    .requiredOption("--from <dir>", "the directory backup --to wrote")
    .action(async (options: { from: string }) => {
      const config = configOf(io);
      err(storeDescription(config));
      const manifest = await restoreBackup(config, path.resolve(io.cwd, options.from), err);
      err(
        `Restored the backup taken at ${manifest.created_at} (schema ${manifest.schema_version}, ${manifest.files.length} files) into ${config.dataDir}.`,
      );
      // The data dir named, as the restore may have been run with TESTBAY_DATA_DIR set for this command only.
      err(
        `Start the server on it with: TESTBAY_DATA_DIR=${config.dataDir} testbay-server start (it applies any newer migrations first)`,
      );
    });
}
