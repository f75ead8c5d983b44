import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

const prefix = "testbay-bench-";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * A fresh temp dir named after this process (`testbay-bench-NAME-PID-xxxxxx`). A run killed with SIGKILL
 * cannot clean up after itself, so dirs left by benchmark processes that no longer exist are removed first.
 */
export async function makeTempDir(name: string): Promise<string> {
  const tmp = os.tmpdir();
  for (const entry of await readdir(tmp)) {
    const pid = Number(/^testbay-bench-.+-(\d+)-[^-]+$/.exec(entry)?.[1]);
    if (entry.startsWith(prefix) && pid > 0 && pid !== process.pid && !alive(pid)) {
      await rm(path.join(tmp, entry), { recursive: true, force: true });
    }
  }
  return mkdtemp(path.join(tmp, `${prefix}${name}-${process.pid}-`));
}
