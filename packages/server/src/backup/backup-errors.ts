/**
 * A backup or restore that was refused, with the exit code `testbay-server` ends with (cli/run-server-cli.ts):
 * - 2: the command cannot work on this configuration or target, and a change of setting or command fixes it
 *   (PostgreSQL or S3 configured, a data dir that is not empty, a backup from a newer schema, no backup there);
 * - 3: the backup failed its checks (a file changed, missing or added since it was written): another backup
 *   is needed, and nothing was written.
 * docs/operating.md ("Backups") lists them for operators' scripts.
 */
export class BackupRefusedError extends Error {
  override name = "BackupRefusedError";

  constructor(
    message: string,
    readonly exitCode: 2 | 3,
  ) {
    super(message);
  }
}
