// Reading the statement count of a claim benchmark server (claim-statement-counter.mjs, preloaded into it).
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export const statementCounter = path.join(import.meta.dirname, "claim-statement-counter.mjs");

/** Statements the server process `pid` has sent to its database so far. */
export async function statementCount(pid: number, file: string): Promise<number> {
  await rm(file, { force: true });
  process.kill(pid, "SIGUSR2");
  for (let waited = 0; waited < 5000; waited += 10) {
    try {
      const text = await readFile(file, "utf8");
      if (text !== "") return Number(text);
    } catch {
      // Not written yet.
    }
    await sleep(10);
  }
  throw new Error(`the server (pid ${pid}) did not write its statement count to ${file} within 5 s`);
}
