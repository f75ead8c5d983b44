import { rmSync } from "node:fs";

/**
 * Removes a lab's state folder after its test. A stand-in process the test's agent stopped may still be writing
 * its last file (a recording's index, a log line) while this removes the folder: rmSync then meets ENOTEMPTY,
 * which it retries. On a loaded CI machine a writer has outlasted every retry (CI at 5e86b78, both labs), and
 * a folder left in the temp dir harms no test: say so and go on rather than fail a test that passed.
 */
export function removeLabDir(stateDir: string): void {
  try {
    rmSync(stateDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOTEMPTY") throw error;
    process.stderr.write(`stand-in lab: left ${stateDir} behind (a stand-in was still writing in it)\n`);
  }
}
